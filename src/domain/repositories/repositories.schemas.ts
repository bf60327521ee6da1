import { z } from "zod";
import { cursorText } from "../shared/pagination.ts";
import { decodeTreeCursor, TREE_PAGE_DEFAULT, TREE_PAGE_MAX } from "./git/tree-cursor.ts";
import { PATH_RE, REF_RE } from "./repo-path.ts";

/** A ref or commit_hash parameter: validateRef's rules as a pattern the OpenAPI document publishes. */
export const refText = z
  .string()
  .min(1)
  .max(255)
  .regex(REF_RE, "should be a branch or tag name, HEAD, or a full or abbreviated commit hash (git's ref-name rules)");

/** A path in the repository: normalizeRepoPath's refusals as a pattern the OpenAPI document publishes. */
export const repoPathText = z
  .string()
  .max(4096)
  .regex(PATH_RE, "should be a path relative to the repository root, without '..' segments, backslashes or control characters");

// The document's pattern and lengths hold for what was sent, so nothing is trimmed first.
const name = z
  .string()
  .min(1)
  .max(100)
  .regex(/^[A-Za-z0-9._-]+$/, "may contain only letters, digits, '.', '_' and '-'");
const branch = z
  .string()
  .min(1)
  .max(255)
  .regex(/^[^\s~^:?*[\\]+$/, "is not a valid branch name");

export const createRepositorySchema = z
  .strictObject({
    url: z.string().max(2048).trim().min(1).meta({ description: "Clone URL (https://, or ssh:// where a credential exists)." }),
    name: name.optional().meta({ description: "Defaults to the last segment of the URL." }),
    default_branch: branch.optional().meta({ description: "Defaults to the remote's HEAD." }),
  })
  .meta({ id: "CreateRepository" });
export type CreateRepositoryInput = z.infer<typeof createRepositorySchema>;

export const updateRepositorySchema = z
  .strictObject({
    name: name.optional(),
    default_branch: branch.optional(),
    auto_analyze: z.boolean().optional(),
    report_check_runs: z.boolean().optional().meta({
      description:
        "Report each run created from now on as a check run on its commit (repositories connected through a GitHub App installation only; 409 otherwise).",
    }),
  })
  .meta({ id: "UpdateRepository" });
export type UpdateRepositoryInput = z.infer<typeof updateRepositorySchema>;

export const repositorySchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    url: z.string(),
    provider: z.enum(["git", "github"]),
    default_branch: z.string().nullable(),
    integration_id: z.uuid().nullable(),
    auto_analyze: z.boolean(),
    report_check_runs: z.boolean().meta({ description: "Each run of the repository reports a check run on its commit on GitHub (docs/users/github.md)." }),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .meta({ id: "Repository" });
export type Repository = z.infer<typeof repositorySchema>;

const refSchema = z.object({ name: z.string(), commit_hash: z.string() });
export const refsSchema = z.object({ head: z.string().nullable(), branches: z.array(refSchema), tags: z.array(refSchema) }).meta({ id: "RepositoryRefs" });

export const treeSchema = z
  .object({
    commit_hash: z.string(),
    path: z.string(),
    entries: z.array(
      z.object({
        name: z.string(),
        path: z.string(),
        type: z.enum(["file", "dir", "symlink", "submodule"]),
        size: z.number().int().nullable(),
      }),
    ),
    next_cursor: z
      .string()
      .nullable()
      .meta({ description: "Pass as ?cursor= (with the same `path`) for the rest of the directory, read at the same commit; null on the last page." }),
  })
  .meta({ id: "RepositoryTree" });

export const fileContentSchema = z
  .object({
    commit_hash: z.string(),
    path: z.string(),
    size: z.number().int().meta({ description: "Full size in bytes, even when truncated." }),
    encoding: z.enum(["utf-8", "base64"]),
    content: z.string(),
    truncated: z.boolean(),
  })
  .meta({ id: "RepositoryFile" });

const personSchema = z.object({
  name: z.string(),
  email: z.string(),
  date: z.string().meta({ description: "RFC 3339, with the offset the commit records (not converted to UTC)." }),
});

export const commitSchema = z
  .object({
    commit_hash: z.string(),
    title: z.string().meta({ description: "The message's first line." }),
    message: z.string().meta({ description: "The whole message, without its final newline; cut after 65,536 characters." }),
    author: personSchema,
    committer: personSchema,
    parents: z.array(z.string()).meta({ description: "The parents' hashes: none for a root commit, two or more for a merge." }),
  })
  .meta({ id: "RepositoryCommit" });

export const filesQuerySchema = z.strictObject({
  ref: refText.optional(),
  path: repoPathText.optional(),
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(TREE_PAGE_MAX)
    .default(TREE_PAGE_DEFAULT)
    .meta({ description: `Entries per page, 1 to ${TREE_PAGE_MAX} (default ${TREE_PAGE_DEFAULT}).` }),
  cursor: cursorText(8192)
    .refine((v) => decodeTreeCursor(v) !== null, { message: "Invalid cursor" })
    .optional()
    .meta({ description: "The previous page's `next_cursor`; the listing continues at the commit the first page read (`ref` is then ignored)." }),
});
export const fileQuerySchema = z.strictObject({ ref: refText.optional() });
