import { OpenApiGeneratorV31, type OpenAPIRegistry } from "@asteasolutions/zod-to-openapi";
import { SCOPE_DESCRIPTIONS } from "../domain/auth/scopes.ts";
import { API_KEY_SCHEME, OAUTH_SCHEME } from "./route.ts";

/**
 * Every operation's tag, described once (the document's `tags`). A route with a
 * tag missing here fails the OpenAPI lint (src/api/openapi-lint.test.ts).
 */
export const TAG_DESCRIPTIONS: Readonly<Record<string, string>> = Object.freeze({
  "API keys": "Keys of the caller's account: create (the secret is shown once), list and revoke.",
  Repositories: "Register git repositories, browse their refs and files at any ref.",
  Analyses: "Analyse a commit: its experiments, their parameters and required variables, and the environment to run them in.",
  Runs: "Run an experiment or any command in a Kubernetes Job; follow, read and page its logs.",
  Environments: "Dependencies installed once per environment key and cached for later runs.",
  "Environment variables": "Encrypted variables passed to runs; values are never returned.",
  Integrations: "Code-host connections (the GitHub App).",
  Webhooks: "Deliveries received from code hosts.",
  Notifications: "Webhook endpoints of the account: signed deliveries when a run or analysis ends, their attempts, and redelivery.",
  OAuth: "OAuth clients and grants of the caller's account.",
});

export function buildOpenApiDocument(registry: OpenAPIRegistry, version: string): object {
  registry.registerComponent("securitySchemes", OAUTH_SCHEME, {
    type: "oauth2",
    description:
      "An OAuth 2.0 access token (`cpat_...`) from this server's own authorization server (docs/users/oauth.md: discovery at `/.well-known/oauth-authorization-server`, PKCE required, dynamic registration at `/oauth/register`).",
    flows: {
      authorizationCode: { authorizationUrl: "/oauth/authorize", tokenUrl: "/oauth/token", refreshUrl: "/oauth/token", scopes: { ...SCOPE_DESCRIPTIONS } },
      clientCredentials: { tokenUrl: "/oauth/token", refreshUrl: "/oauth/token", scopes: { ...SCOPE_DESCRIPTIONS } },
    },
  });
  registry.registerComponent("securitySchemes", API_KEY_SCHEME, {
    type: "http",
    scheme: "bearer",
    description:
      "An API key (`cp_...`) sent as a bearer token. A key holds the scopes chosen when it was made (the same names as the OAuth scopes); each operation's description names the scope it needs, checked as for an OAuth token.",
  });
  const doc = new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: "3.1.0",
    info: {
      title: "codeplane API",
      version,
      contact: { name: "codeplane maintainers" },
      license: { name: "Apache-2.0", identifier: "Apache-2.0" },
      description: [
        "A Kubernetes-native control plane for code repositories.",
        "",
        "Conventions: JSON in and out; ids are UUIDv7; timestamps RFC 3339 UTC. Lists take `limit` (1-100, default 20) and `cursor` and answer `{items, next_cursor}`, newest first.",
        'Validation failures answer 422 with `{detail: [{loc, msg, type}]}`; every other failure answers `{detail: "..."}`.',
        "A string or object key holding a NUL character (U+0000) or an unpaired UTF-16 surrogate, anywhere in a path, query or body, is refused with 422 (`type: value_error`; an object key's `loc` ends in `[key]`).",
        "Every response carries `X-Request-Id`. `/v1` responses carry `RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset`; a 429 adds `Retry-After`.",
        "Failed authentications (a credential sent but not valid) are counted per client address: once an address has had `CODEPLANE_AUTH_FAILURE_LIMIT` (default 30) in a rate-limit window, its requests carrying a credential answer 429 (`Too many failed authentication attempts`, with `Retry-After`) before any lookup, until the window ends. Authentication, rate limits and the scope check all come before the request body is read: a request refused with 401, 403 or 429 is answered without waiting for its body.",
        "Every response carries `X-Content-Type-Options: nosniff`, `X-Frame-Options: DENY`, `Referrer-Policy: no-referrer` (`same-origin` on the OAuth sign-in and consent page, whose own forms must carry an `Origin`) and a `Content-Security-Policy` with `frame-ancestors 'none'`; `/v1` responses (the new key of `POST /v1/auth/keys` above all) carry `Cache-Control: no-store`.",
        "Another account's resource answers 404, never 403.",
        "A known path answers a method it does not serve (TRACE and CONNECT included) with 405 and an `Allow` header listing the methods it serves; `OPTIONS` answers 204 with the same `Allow`; an unknown path answers 404.",
        "Not described here: `POST /mcp` speaks the Model Context Protocol (JSON-RPC over Streamable HTTP) with the same credentials, scopes, tenancy and rate limits; its tools and their JSON schemas are listed by the protocol itself (`tools/list`; see docs/users/mcp.md in the repository).",
        "Not described here: `/git/` serves git's smart HTTP protocol (upload-pack only, read-only) to run and analysis pods' checkouts, authenticated by each workload's checkout token rather than an API key; its clients are git itself, not API users (see docs/operators/checkout.md in the repository).",
      ].join("\n"),
    },
    servers: [{ url: "/" }],
    tags: usedTags(registry).map((name) => ({ name, description: TAG_DESCRIPTIONS[name] ?? "" })),
  });
  return itemSchemaAsExtension(doc);
}

/**
 * OpenAPI 3.2 describes each event of a `text/event-stream` with the media type's `itemSchema`;
 * a 3.1 document carries it as the extension `x-itemSchema` (3.1 allows no other new field).
 */
function itemSchemaAsExtension<D extends { paths?: object }>(doc: D): D {
  for (const item of Object.values(doc.paths ?? {}) as Record<
    string,
    { responses?: Record<string, { content?: Record<string, Record<string, unknown>> }> }
  >[]) {
    for (const op of Object.values(item)) {
      for (const response of Object.values(op.responses ?? {})) {
        for (const media of Object.values(response.content ?? {})) {
          if (!("itemSchema" in media)) continue;
          media["x-itemSchema"] = media.itemSchema;
          delete media.itemSchema;
        }
      }
    }
  }
  return doc;
}

/** The tags the registered operations use, in the order of TAG_DESCRIPTIONS (then any other, for the lint to name). */
function usedTags(registry: OpenAPIRegistry): string[] {
  const used = new Set<string>();
  for (const d of registry.definitions) if (d.type === "route") for (const t of d.route.tags ?? []) used.add(t);
  const known = Object.keys(TAG_DESCRIPTIONS);
  return [...known.filter((t) => used.has(t)), ...[...used].filter((t) => !known.includes(t)).sort()];
}
