import { OpenApiGeneratorV31, type OpenAPIRegistry } from "@asteasolutions/zod-to-openapi";
import { SCOPES } from "../domain/auth/scopes.ts";

export function buildOpenApiDocument(registry: OpenAPIRegistry, version: string): object {
  registry.registerComponent("securitySchemes", "bearerAuth", {
    type: "http",
    scheme: "bearer",
    description: `An API key (\`cp_...\`) or an OAuth access token. Scopes: ${SCOPES.map((s) => `\`${s}\``).join(", ")}.`,
  });
  const doc = new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: "3.1.0",
    info: {
      title: "codeplane API",
      version,
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
