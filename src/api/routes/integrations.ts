import { z } from "zod";
import type { Db } from "../../db/database.ts";
import type { IntegrationService } from "../../domain/integrations/integrations.ts";
import { decodeGitHubCursor } from "../../domain/integrations/integrations.ts";
import {
  callbackQuerySchema,
  connectGitHubSchema,
  installationRepositorySchema,
  installUrlSchema,
  integrationSchema,
  registerInstallationRepositorySchema,
} from "../../domain/integrations/integrations.schemas.ts";
import { repositorySchema } from "../../domain/repositories/repositories.schemas.ts";
import { cursorText } from "../../domain/shared/pagination.ts";
import { HttpError } from "../http-error.ts";
import { errorBodySchema, type Routes } from "../route.ts";
import { idParam, pageOf, pageQuery, retryAfter } from "./common.ts";

const integrationParam = idParam("integration_id");
const notFound = { description: "No such integration in this account (another account's is 404 too).", schema: errorBodySchema };
const TAG = "Integrations";
const NOT_CONFIGURED =
  "The GitHub integration is not configured on this server (the detail names the settings to set: CODEPLANE_GITHUB_APP_ID, CODEPLANE_GITHUB_PRIVATE_KEY, CODEPLANE_GITHUB_WEBHOOK_SECRET, CODEPLANE_GITHUB_APP_SLUG, CODEPLANE_PUBLIC_URL)";
const unavailable = (more = "") => ({
  description: `${NOT_CONFIGURED}; or GitHub could not be reached, timed out, failed or refused the App's credentials${more}. A rate limit adds \`Retry-After\`.`,
  schema: errorBodySchema,
  headers: retryAfter,
});

/** GitHub's own pages: the cursor holds a page number of GitHub's list, not an id. */
const installationRepositoriesQuery = z.strictObject({
  limit: pageQuery.shape.limit,
  cursor: cursorText(64)
    .refine((v) => decodeGitHubCursor(v) !== null, { message: "Invalid cursor" })
    .optional()
    .meta({ description: "The previous page's `next_cursor` (an opaque token holding GitHub's page; its page size wins over `limit`)." }),
});

export function registerIntegrationRoutes(routes: Routes, db: Db, integrations: IntegrationService): void {
  routes.add({
    method: "get",
    path: "/v1/integrations/github/install",
    operationId: "getGitHubInstallUrl",
    summary: "Get the GitHub App's installation URL",
    description:
      "`{web_url}/apps/{slug}/installations/new?state=...`, built without calling GitHub. `state` is signed by this server (HMAC-SHA-256 under a key derived from its encryption key), bound to this account and valid for one hour: the callback connects the installation to the account that asked for the URL.",
    tag: TAG,
    scope: "integrations:write",
    responses: { 200: { description: "Where to send a person to install the App.", schema: installUrlSchema }, 503: unavailable() },
    handler: async (_ctx, { principal }) => ({ status: 200, body: integrations.installUrl(principal.accountId) }),
  });

  routes.add({
    method: "get",
    path: "/v1/integrations/github/callback",
    operationId: "gitHubInstallCallback",
    summary: "GitHub App setup callback",
    description:
      "The GitHub App's Setup URL (`{CODEPLANE_PUBLIC_URL}/v1/integrations/github/callback`), opened by the person's browser after installing: no bearer token, `state` is the authentication. Verifies `state` (signature, expiry), checks the installation through GitHub's API (it must be this App's, and created or changed after the state was issued), records the integration for the state's account and redirects to the dashboard: `/ui/integrations/{integration_id}`, or `/ui/integrations?status=pending` when an organization owner still has to approve (`setup_action=request`, no `installation_id`). Connecting again an installation the account already has updates it.",
    tag: TAG,
    scope: null,
    query: callbackQuerySchema,
    responses: {
      302: {
        description: "Connected (or pending approval): on to the dashboard.",
        headers: {
          Location: {
            description: "`{CODEPLANE_PUBLIC_URL}/ui/integrations/{integration_id}`, or `.../ui/integrations?status=pending`.",
            schema: { type: "string" },
          },
        },
      },
      400: {
        description:
          "The state is altered, not this server's, or expired (one hour), or the installation was not created or changed during this flow; the detail says what to do.",
        schema: errorBodySchema,
      },
      401: { description: "A bearer token was sent and is not valid (none is needed here).", schema: errorBodySchema },
      404: { description: "GitHub does not know this installation for this App (deleted, or another App's).", schema: errorBodySchema },
      409: { description: "The installation is connected to another codeplane account.", schema: errorBodySchema },
      429: {
        description: "Too many requests from this address; see Retry-After.",
        schema: errorBodySchema,
        headers: { "Retry-After": { description: "Seconds until the window ends.", schema: { type: "integer", minimum: 1 } } },
      },
      503: unavailable(),
    },
    handler: async (ctx, { query }) => {
      const outcome = await integrations.callback(db, query);
      ctx.set("Location", outcome.location);
      return { status: 302 };
    },
  });

  routes.add({
    method: "post",
    path: "/v1/integrations/github",
    operationId: "connectGitHubInstallation",
    summary: "Connect a GitHub App installation",
    description:
      "The callback's work without a browser: the installation must be one this App can see (checked through GitHub's API) and not connected to another codeplane account. Connecting an installation this account has already answers 200 with it (its details refreshed from GitHub).",
    tag: TAG,
    scope: "integrations:write",
    body: connectGitHubSchema,
    responses: {
      201: { description: "Connected.", schema: integrationSchema },
      200: { description: "This account had it connected already.", schema: integrationSchema },
      404: { description: "GitHub does not know this installation for this App (deleted, or another App's).", schema: errorBodySchema },
      409: { description: "The installation is connected to another codeplane account (it must be disconnected there first).", schema: errorBodySchema },
      503: unavailable(),
    },
    handler: async (_ctx, { body, principal }) => {
      const { integration, created } = await integrations.connect(db, principal.accountId, body.installation_id);
      return { status: created ? 201 : 200, body: integration };
    },
  });

  routes.add({
    method: "get",
    path: "/v1/integrations",
    operationId: "listIntegrations",
    summary: "List integrations",
    description: "The account's code-host connections (GitHub App installations), newest first.",
    tag: TAG,
    scope: "integrations:read",
    query: pageQuery,
    responses: {
      200: { description: "A page of connected installations, newest first.", schema: pageOf(integrationSchema, "IntegrationPage") },
      503: unavailable(),
    },
    handler: async (_ctx, { query, principal }) => ({ status: 200, body: await integrations.list(db, principal.accountId, query) }),
  });

  routes.add({
    method: "get",
    path: "/v1/integrations/{integration_id}",
    operationId: "getIntegration",
    summary: "Get an integration",
    description: "One code-host connection of the account: its installation, which repositories it can see, and whether it is suspended.",
    tag: TAG,
    scope: "integrations:read",
    params: integrationParam,
    responses: { 200: { description: "The integration.", schema: integrationSchema }, 404: notFound, 503: unavailable() },
    handler: async (_ctx, { params, principal }) => ({ status: 200, body: await integrations.get(db, principal.accountId, params.integration_id) }),
  });

  routes.add({
    method: "delete",
    path: "/v1/integrations/{integration_id}",
    operationId: "deleteIntegration",
    summary: "Disconnect an integration",
    description:
      "Disconnects the installation from this account (nothing changes on GitHub: uninstall the App there to remove it). The repositories registered through it are kept, readable as of their last fetch, with `integration_id` null and `auto_analyze` and `report_check_runs` off; they are no longer fetched (a read that needs a fetch answers 409) and webhooks no longer reach them. Delete them like any repository.",
    tag: TAG,
    scope: "integrations:write",
    params: integrationParam,
    responses: { 204: { description: "Disconnected." }, 404: notFound, 503: unavailable() },
    handler: async (_ctx, { params, principal }) => {
      await integrations.delete(db, principal.accountId, params.integration_id);
      return { status: 204 };
    },
  });

  routes.add({
    method: "get",
    path: "/v1/integrations/{integration_id}/repositories",
    operationId: "listInstallationRepositories",
    summary: "List what the installation can see",
    description:
      "The repositories GitHub lets the installation see, a page of GitHub's list at a time (in GitHub's order, not newest first), each with the codeplane repository registered from it, if any.",
    tag: TAG,
    scope: "integrations:read",
    params: integrationParam,
    query: installationRepositoriesQuery,
    responses: {
      200: { description: "A page of repositories.", schema: pageOf(installationRepositorySchema, "InstallationRepositoryPage") },
      404: { description: "No such integration in this account, or GitHub no longer knows the installation.", schema: errorBodySchema },
      409: { description: "The installation is suspended on GitHub.", schema: errorBodySchema },
      503: unavailable(),
    },
    handler: async (_ctx, { params, query, principal }) => ({
      status: 200,
      body: await integrations.repositories(db, principal.accountId, params.integration_id, query),
    }),
  });

  routes.add({
    method: "post",
    path: "/v1/integrations/{integration_id}/repositories",
    operationId: "registerInstallationRepository",
    summary: "Register a repository the installation can see",
    description:
      'Registers `full_name` as a repository with `provider: "github"` and this `integration_id`: fetched once into the mirror with an installation access token minted for the fetch (passed to git in its environment, never stored or logged), as every later fetch is. Needs `repositories:write` and `integrations:read`. The name is GitHub\'s, or `<owner>-<name>` when the account has a repository of that name already.',
    tag: TAG,
    scope: "repositories:write",
    params: integrationParam,
    body: registerInstallationRepositorySchema,
    responses: {
      201: { description: "Registered.", schema: repositorySchema },
      403: { description: "Also `integrations:read` is needed." },
      404: { description: "No such integration in this account, or the installation cannot see that repository.", schema: errorBodySchema },
      409: { description: "The repository (its URL) is registered already, or the installation is suspended.", schema: errorBodySchema },
      503: unavailable(", or the repository could not be fetched (or no git fetch slot became free in time)"),
    },
    handler: async (_ctx, { params, body, principal }) => {
      if (!principal.scopes.has("integrations:read")) throw new HttpError(403, "Missing scope: integrations:read");
      return { status: 201, body: await integrations.registerRepository(db, principal.accountId, params.integration_id, body) };
    },
  });
}
