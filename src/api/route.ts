import type Router from "@koa/router";
import type { OpenAPIRegistry, ResponseConfig, RouteConfig } from "@asteasolutions/zod-to-openapi";
import type { Context, Middleware } from "koa";
import { z } from "zod";
import type { Principal, Scope } from "../domain/auth/scopes.ts";
import type { ValidationIssue } from "../domain/errors.ts";
import type { Logger } from "../logger.ts";
import { HttpError, missingScope, notAuthenticated } from "./http-error.ts";
import { validatePart, type Location } from "./validation.ts";

// One declaration per endpoint drives both the Koa route (validation, auth,
// scope check) and its OpenAPI operation, so the document cannot drift from
// what the server enforces.

type Method = "get" | "post" | "patch" | "delete";

export interface RouteInput<P, Q, B> {
  params: P;
  query: Q;
  body: B;
  principal: Principal;
  log: Logger;
}

export interface Reply {
  status: number;
  body?: unknown;
}

type Infer<S> = S extends z.ZodType ? z.output<S> : undefined;

/**
 * A handler's input. `log` is read from the request's state when the handler
 * logs, so the request's logger is made only then (middleware/
 * request-context.ts). It is a getter on the class, not one written into an
 * object literal per request: V8 gives an object with its own getter a
 * dictionary of properties, and with one per request every object the request
 * touched outlived the young-generation collections and was promoted, to be
 * freed only by full collections (bench/api.ts: the list's scavenges cost 3x).
 */
export class HandlerInput<P, Q, B> implements RouteInput<P, Q, B> {
  readonly #ctx: Context;
  readonly params: P;
  readonly query: Q;
  readonly body: B;
  readonly principal: Principal;

  constructor(ctx: Context, params: P, query: Q, body: B, principal: Principal) {
    this.#ctx = ctx;
    this.params = params;
    this.query = query;
    this.body = body;
    this.principal = principal;
  }

  get log(): Logger {
    return this.#ctx.state.log as Logger;
  }
}

export interface RouteSpec<PS extends z.ZodType | undefined, QS extends z.ZodType | undefined, BS extends z.ZodType | undefined> {
  method: Method;
  /** OpenAPI form: /v1/things/{thing_id} */
  path: string;
  /** Koa form when it differs (e.g. a wildcard tail). Derived from `path` otherwise. */
  koaPath?: string;
  operationId: string;
  summary: string;
  /** What it does, beyond the summary: every operation has one (the OpenAPI lint, openapi-lint.test.ts). */
  description: string;
  tag: string;
  /** Required scope; null for a public endpoint. */
  scope: Scope | null;
  params?: PS;
  query?: QS;
  body?: BS;
  /** Request headers the route reads (e.g. Idempotency-Key), by their documented names: validated like the rest (`loc: ["header", name]`); the handler reads them with ctx.get(). */
  headers?: z.ZodObject;
  /** JSON unless contentType says otherwise (the SSE stream, whose events itemSchema describes: OpenAPI 3.2's field, written as x-itemSchema in 3.1). */
  responses: Record<number, { description: string; schema?: z.ZodType; contentType?: string; itemSchema?: z.ZodType; headers?: ResponseHeaders }>;
  handler: (ctx: Context, input: RouteInput<Infer<PS>, Infer<QS>, Infer<BS>>) => Promise<Reply>;
}

/** Response headers for the OpenAPI document, e.g. Retry-After on a 503. */
export type ResponseHeaders = Record<string, { description: string; schema: { type: "integer" | "string"; minimum?: number } }>;

/** The OpenAPI security schemes (openapi.ts describes them). */
export const OAUTH_SCHEME = "oauth2";
export const API_KEY_SCHEME = "apiKey";

export const errorBodySchema = z.object({ detail: z.string() }).meta({ id: "Error", description: "Every failure other than validation." });
export const validationErrorSchema = z
  .object({ detail: z.array(z.object({ loc: z.array(z.union([z.string(), z.number()])), msg: z.string(), type: z.string() })) })
  .meta({ id: "ValidationError" });

/** The query of a route that declares none: an unknown parameter is refused (`extra_forbidden`), as in a declared query or a body. */
const noQuery = z.strictObject({});

const retryAfterHeader = {
  "Retry-After": { description: "Seconds to wait before trying again.", schema: { type: "integer" as const, minimum: 1 } },
};
const UNDER_LOAD =
  "A service this operation depends on failed or was busy (the database's pool, Postgres, the Kubernetes API server, the network, this process's resources); try again after `Retry-After` (docs/users/api-behaviour.md lists the classes).";
const CONCURRENT = "A concurrent request created, changed or removed the same resource meanwhile; read it again.";

/**
 * Every operation can meet an infrastructure failure under load (errors.ts answers it with
 * domain/infrastructure-errors.ts): its 503 (with Retry-After) is documented everywhere, and
 * the 409 of a concurrent change on every operation that writes; an operation's own 503 or 409
 * keeps its description, with this one added.
 */
function documentInfrastructureFailures(responses: RouteConfig["responses"], writes: boolean): void {
  const add = (status: 409 | 503, description: string, headers?: typeof retryAfterHeader) => {
    const declared = responses[status] as (ResponseConfig & { headers?: ResponseHeaders }) | undefined;
    responses[status] = declared
      ? { ...declared, description: `${declared.description} Also: ${description}`, ...(headers && { headers: { ...headers, ...declared.headers } }) }
      : { description, content: { "application/json": { schema: errorBodySchema } }, ...(headers && { headers }) };
  };
  add(503, UNDER_LOAD, retryAfterHeader);
  if (writes) add(409, CONCURRENT);
}

const toKoaPath = (p: string) => p.replace(/\{([A-Za-z0-9_]+)\}/g, ":$1");

function parsePart(schema: z.ZodType | undefined, value: unknown, loc: Location, issues: ValidationIssue[]): unknown {
  if (!schema) return undefined;
  const r = validatePart(schema, value, loc);
  if (r.success) return r.data;
  issues.push(...r.issues);
  return undefined;
}

/** What the body reader calls once it is done: nothing, the route goes on itself. */
const afterBody = async () => undefined;

const isJson = (ctx: Context) => ctx.request.is("application/json", "application/*+json") !== false;

export class Routes {
  readonly router: Router;
  readonly registry: OpenAPIRegistry;
  /** Reads and parses the request body (koa-body); run only once the caller is known to be allowed. */
  readonly #readBody: Middleware;

  constructor(router: Router, registry: OpenAPIRegistry, readBody: Middleware = (_ctx, next) => next()) {
    this.router = router;
    this.registry = registry;
    this.#readBody = readBody;
  }

  add<PS extends z.ZodType | undefined, QS extends z.ZodType | undefined, BS extends z.ZodType | undefined>(spec: RouteSpec<PS, QS, BS>): void {
    this.#document(spec);
    this.router[spec.method](spec.koaPath ?? toKoaPath(spec.path), async (ctx) => {
      const principal = ctx.state.principal as Principal | undefined;
      if (spec.scope) {
        const baseUrl = ctx.state.baseUrl as string | null | undefined;
        if (!principal) throw notAuthenticated(baseUrl);
        if (!principal.scopes.has(spec.scope)) throw missingScope(spec.scope, baseUrl);
      }
      if (spec.body && ctx.request.length && ctx.request.type && !isJson(ctx)) {
        throw new HttpError(415, "Unsupported Media Type: send application/json");
      }
      // Only now is the body read: a request refused above never makes the server wait for (or buffer) its body.
      // A GET (or HEAD) has none the reader would parse (app.ts: POST, PUT, PATCH and DELETE), so it is not asked:
      // on the list path its content-type checks were work for nothing on every request (issue 36).
      if (spec.method !== "get") await this.#readBody(ctx, afterBody);
      const issues: ValidationIssue[] = [];
      const params = parsePart(spec.params, ctx.params, "path", issues);
      const query = parsePart(spec.query ?? noQuery, { ...ctx.query }, "query", issues);
      const body = parsePart(spec.body, (ctx.request as { body?: unknown }).body, "body", issues);
      if (spec.headers) {
        const given = Object.fromEntries(Object.keys(spec.headers.shape).map((name) => [name, ctx.get(name) || undefined]));
        parsePart(spec.headers, given, "header", issues);
      }
      if (issues.length) throw new HttpError(422, issues);
      const input = new HandlerInput<Infer<PS>, Infer<QS>, Infer<BS>>(ctx, params as Infer<PS>, query as Infer<QS>, body as Infer<BS>, principal as Principal);
      const reply = await spec.handler(ctx, input);
      ctx.status = reply.status;
      if (reply.body !== undefined) ctx.body = reply.body;
    });
  }

  #document(spec: RouteSpec<z.ZodType | undefined, z.ZodType | undefined, z.ZodType | undefined>): void {
    const responses: RouteConfig["responses"] = {};
    for (const [status, r] of Object.entries(spec.responses)) {
      responses[status] = r.schema
        ? {
            description: r.description,
            content: { [r.contentType ?? "application/json"]: { schema: r.schema, ...(r.itemSchema && { itemSchema: r.itemSchema }) } },
          }
        : { description: r.description };
      if (r.headers) responses[status] = { ...responses[status], headers: r.headers };
    }
    const err = (description: string) => ({ description, content: { "application/json": { schema: errorBodySchema } } });
    if (spec.scope) {
      responses[401] = err("Missing, invalid, revoked or expired credential.");
      responses[403] = err([`The credential lacks the \`${spec.scope}\` scope.`, spec.responses[403]?.description].filter(Boolean).join(" "));
      const own = spec.responses[429]?.description;
      responses[429] = {
        ...err(
          ["Rate limit exceeded, or too many failed authentications from this address; see Retry-After.", own && `Also: ${own}`].filter(Boolean).join(" "),
        ),
        ...(own && { headers: retryAfterHeader }),
      };
    }
    // Every route validates its query, declared or not (an unknown parameter is a 422).
    responses[422] = {
      description: "Validation failed. Also for any string or object key holding a NUL character or an unpaired UTF-16 surrogate (`value_error`).",
      content: { "application/json": { schema: validationErrorSchema } },
    };
    if (spec.body) {
      responses[413] = err("Request body too large.");
      responses[415] = err("Request body is not JSON.");
    }
    // The body reader runs on POST, PATCH and DELETE whether or not the route declares a body.
    if (spec.method !== "get") {
      const unreadable = "The body could not be decoded (a corrupt `Content-Encoding`).";
      const declared = spec.responses[400];
      responses[400] = declared ? { ...responses[400], description: `${declared.description} ${unreadable}` } : err(unreadable);
      responses[413] ??= err("Request body too large.");
      responses[415] = err(spec.body ? "The body is not JSON, or its `Content-Encoding` is not supported." : "The body's `Content-Encoding` is not supported.");
      responses[422] ??= {
        description: "Validation failed: the body is not valid JSON (`json_invalid`).",
        content: { "application/json": { schema: validationErrorSchema } },
      };
    }
    documentInfrastructureFailures(responses, spec.method !== "get");
    responses[500] = err("An unexpected failure (a bug); the body reveals nothing, the log has the request id.");
    this.registry.registerPath({
      method: spec.method,
      path: spec.path,
      operationId: spec.operationId,
      summary: spec.summary,
      description: spec.scope ? `${spec.description}\n\nScope: \`${spec.scope}\`.` : spec.description,
      tags: [spec.tag],
      // An OAuth access token or an API key holding the scope; a public operation says so (`[]`).
      security: spec.scope ? [{ [OAUTH_SCHEME]: [spec.scope] }, { [API_KEY_SCHEME]: [] }] : [],
      request: {
        ...(spec.params && { params: spec.params as z.ZodObject }),
        ...(spec.query && { query: spec.query as z.ZodObject }),
        ...(spec.headers && { headers: spec.headers }),
        // Any application/*+json is read as JSON (app.ts); a PATCH names the merge-patch type (RFC 7396), whose meaning it has.
        ...(spec.body && {
          body: {
            required: true,
            content: {
              "application/json": { schema: spec.body },
              ...(spec.method === "patch" && { "application/merge-patch+json": { schema: spec.body } }),
            },
          },
        }),
      },
      responses,
    });
  }
}
