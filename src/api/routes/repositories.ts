import { z } from "zod";
import type { Db } from "../../db/database.ts";
import { normalizeRepoPath } from "../../domain/repositories/repo-path.ts";
import type { RepositoryService } from "../../domain/repositories/repositories.ts";
import {
  commitSchema,
  createRepositorySchema,
  fileContentSchema,
  fileQuerySchema,
  filesQuerySchema,
  refText,
  refsSchema,
  repoPathText,
  repositorySchema,
  treeSchema,
  updateRepositorySchema,
} from "../../domain/repositories/repositories.schemas.ts";
import { errorBodySchema, type Routes } from "../route.ts";
import { gitRefused, gitRefusedDescription, gitUnavailable, idParam, pageOf, pageQuery, retryAfter } from "./common.ts";

const repoParam = idParam("repository_id");
const notFound = { description: "No such repository in this account.", schema: errorBodySchema };

export function registerRepositoryRoutes(routes: Routes, db: Db, repos: RepositoryService): void {
  routes.add({
    method: "post",
    path: "/v1/repositories",
    operationId: "createRepository",
    summary: "Register a repository",
    description:
      "Fetches the repository once to check that it is readable and to learn its default branch. Loopback, private and link-local addresses, `file://` and local paths are refused unless the operator allows local repositories.",
    tag: "Repositories",
    scope: "repositories:write",
    body: createRepositorySchema,
    responses: {
      201: { description: "Registered.", schema: repositorySchema },
      409: { description: "Already registered (same URL or name).", schema: errorBodySchema },
      503: {
        description:
          "The repository could not be fetched (its host failed, timed out or could not be resolved), or no git fetch slot of this account's share became free within the queue wait, in which case `Retry-After` says when to try again.",
        schema: errorBodySchema,
        headers: retryAfter,
      },
    },
    handler: async (_ctx, { body, principal }) => ({ status: 201, body: await repos.create(db, principal.accountId, body) }),
  });

  routes.add({
    method: "get",
    path: "/v1/repositories",
    operationId: "listRepositories",
    summary: "List repositories",
    description: "The account's registered repositories, newest first.",
    tag: "Repositories",
    scope: "repositories:read",
    query: pageQuery,
    responses: { 200: { description: "A page of repositories, newest first.", schema: pageOf(repositorySchema, "RepositoryPage") } },
    handler: async (_ctx, { query, principal }) => ({ status: 200, body: await repos.list(db, principal.accountId, query) }),
  });

  routes.add({
    method: "get",
    path: "/v1/repositories/{repository_id}",
    operationId: "getRepository",
    summary: "Get a repository",
    description: "One registered repository: its clone URL, default branch and settings.",
    tag: "Repositories",
    scope: "repositories:read",
    params: repoParam,
    responses: { 200: { description: "The repository.", schema: repositorySchema }, 404: notFound },
    handler: async (_ctx, { params, principal }) => ({ status: 200, body: await repos.get(db, principal.accountId, params.repository_id) }),
  });

  routes.add({
    method: "patch",
    path: "/v1/repositories/{repository_id}",
    operationId: "updateRepository",
    summary: "Update a repository",
    description:
      "Changes its name, default branch, automatic analysis or check-run reporting (`report_check_runs`: each run created afterwards reports a check run on its commit through the repository's GitHub App installation); fields left out keep their value.",
    tag: "Repositories",
    scope: "repositories:write",
    params: repoParam,
    body: updateRepositorySchema,
    responses: {
      200: { description: "Updated.", schema: repositorySchema },
      404: notFound,
      409: {
        description: `Name taken. Or \`report_check_runs: true\` for a repository not connected through a GitHub App installation. Or, when \`default_branch\` changes: ${gitRefusedDescription}`,
        schema: errorBodySchema,
      },
      503: {
        description: `A new \`default_branch\` is checked against the repository: ${gitUnavailable.description}`,
        schema: errorBodySchema,
        headers: retryAfter,
      },
    },
    handler: async (_ctx, { params, body, principal }) => ({
      status: 200,
      body: await repos.update(db, principal.accountId, params.repository_id, body),
    }),
  });

  routes.add({
    method: "delete",
    path: "/v1/repositories/{repository_id}",
    operationId: "deleteRepository",
    summary: "Delete a repository",
    description: "Also deletes its repository-scoped environment variables and its cached mirror.",
    tag: "Repositories",
    scope: "repositories:write",
    params: repoParam,
    responses: { 204: { description: "Deleted." }, 404: notFound },
    handler: async (_ctx, { params, principal }) => {
      await repos.delete(db, principal.accountId, params.repository_id);
      return { status: 204 };
    },
  });

  routes.add({
    method: "get",
    path: "/v1/repositories/{repository_id}/refs",
    operationId: "listRepositoryRefs",
    summary: "List branches and tags",
    description: "Refreshes the mirror when it is older than the configured interval. Annotated tags are peeled to their commit.",
    tag: "Repositories",
    scope: "repositories:read",
    params: repoParam,
    responses: { 200: { description: "Branches and tags with commit hashes.", schema: refsSchema }, 404: notFound, 409: gitRefused, 503: gitUnavailable },
    handler: async (_ctx, { params, principal }) => ({ status: 200, body: await repos.refs(db, principal.accountId, params.repository_id) }),
  });

  routes.add({
    method: "get",
    path: "/v1/repositories/{repository_id}/files",
    operationId: "listRepositoryFiles",
    summary: "List a directory",
    description:
      "`ref` is a branch, tag or commit hash (default: the default branch); `path` is a directory (default: the root). Directories come first, then files, symlinks and submodules, each group in byte order of the name. Paginated: at most `limit` entries (1 to 1000, default 1000) and a `next_cursor` for the rest, which pins the commit the first page read, so every page of one listing shows the same commit even if the branch moves meanwhile.",
    tag: "Repositories",
    scope: "repositories:read",
    params: repoParam,
    query: filesQuerySchema,
    responses: {
      200: { description: "A page of the directory's entries.", schema: treeSchema },
      400: { description: "An entry of the listing is too large to answer (a malformed tree).", schema: errorBodySchema },
      404: { description: "No such repository, ref or directory.", schema: errorBodySchema },
      409: gitRefused,
      503: gitUnavailable,
    },
    handler: async (_ctx, { params, query, principal }) => {
      const path = normalizeRepoPath(query.path ?? "", ["query", "path"]);
      const page = { limit: query.limit, cursor: query.cursor };
      return { status: 200, body: await repos.tree(db, principal.accountId, params.repository_id, query.ref, path, page) };
    },
  });

  routes.add({
    method: "get",
    path: "/v1/repositories/{repository_id}/commits/{ref}",
    // A branch's name may hold slashes (feature/x), sent as they are or as %2F.
    koaPath: "/v1/repositories/:repository_id/commits/*ref",
    operationId: "getRepositoryCommit",
    summary: "Read a commit",
    description:
      "The commit `ref` names (a branch, tag, full or short commit hash): its hash, its message (and the message's first line, `title`), its author and committer with their dates, and its parents. An unknown ref makes one fetch of the repository (at most every few seconds) before it is a 404.",
    tag: "Repositories",
    scope: "repositories:read",
    params: z.strictObject({ repository_id: z.uuid(), ref: refText }),
    responses: {
      200: { description: "The commit.", schema: commitSchema },
      404: { description: "No such repository or ref.", schema: errorBodySchema },
      409: gitRefused,
      503: gitUnavailable,
    },
    handler: async (_ctx, { params, principal }) => ({ status: 200, body: await repos.commit(db, principal.accountId, params.repository_id, params.ref) }),
  });

  routes.add({
    method: "get",
    path: "/v1/repositories/{repository_id}/files/{path}",
    koaPath: "/v1/repositories/:repository_id/files/*path",
    operationId: "getRepositoryFile",
    summary: "Read a file",
    description:
      "UTF-8 text comes back as is; anything else base64. Content beyond the configured maximum is cut (on a character boundary) with `truncated: true`; `size` is always the full size. A symlink returns its target.",
    tag: "Repositories",
    scope: "repositories:read",
    params: z.strictObject({ repository_id: z.uuid(), path: repoPathText.min(1) }),
    query: fileQuerySchema,
    responses: {
      200: { description: "The file.", schema: fileContentSchema },
      400: { description: "The path is a directory (list it with `GET .../files?path=`).", schema: errorBodySchema },
      404: { description: "No such repository, ref or file.", schema: errorBodySchema },
      409: gitRefused,
      503: gitUnavailable,
    },
    handler: async (_ctx, { params, query, principal }) => {
      const path = normalizeRepoPath(params.path, ["path", "path"]);
      return { status: 200, body: await repos.file(db, principal.accountId, params.repository_id, query.ref, path) };
    },
  });
}
