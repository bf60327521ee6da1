import { request } from "node:http";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { errorBodySchema, validationErrorSchema } from "../../src/api/route.ts";
import { startTestService, type Tenant, type TestService } from "../helpers/service.ts";

// Two rules of the contract, driven over real HTTP for every operation in the
// OpenAPI document (so a new endpoint is covered the day it is added):
//  - a known path answers a method it does not serve, TRACE and CONNECT
//    included, with 405, an Allow header and a {"detail"} body; an unknown
//    path answers 404;
//  - every status the route layer and its middleware can produce (401, 403,
//    422, 413, 415, 400, 429) is listed for the operation, with the body
//    schema the server actually sends.

interface Op {
  method: string;
  path: string;
  operationId: string;
  scope: string | undefined;
  responses: Record<string, { content?: Record<string, { schema?: { $ref?: string } }> }>;
  params: { name: string; in: string }[];
  hasBody: boolean;
  /** Authenticated by a signature, outside the route layer (the GitHub webhook): its own suite is test/api/github-webhooks.test.ts. */
  signed: boolean;
}

const ID = "0190b1c2-3d4e-7f00-8a1b-2c3d4e5f6a7b";
const concrete = (p: string) =>
  p
    .replace(/\{[a-z_]+_id\}/g, ID)
    .replace("{commit_hash}", "main")
    .replace("{path}", "README.md");

let svc: TestService;
let limited: TestService;
let tenant: Tenant;
let noScope: Tenant;
/** For the operations that need integrations:read, which noScope has. */
let noIntegrationScope: Tenant;
let ops: Op[] = [];

async function operations(url: string): Promise<Op[]> {
  const doc = (await (await fetch(`${url}/openapi.json`)).json()) as { paths: Record<string, Record<string, Record<string, unknown>>> };
  const out: Op[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      const security = op.security as { oauth2?: string[] }[] | undefined;
      out.push({
        method: method.toUpperCase(),
        path,
        operationId: op.operationId as string,
        scope: security?.[0]?.oauth2?.[0],
        responses: op.responses as Op["responses"],
        params: (op.parameters as Op["params"] | undefined) ?? [],
        hasBody: op.requestBody !== undefined,
        signed: op["x-authentication"] !== undefined,
      });
    }
  }
  return out;
}

/** A raw request through node:http (fetch refuses TRACE and CONNECT). */
function raw(
  base: string,
  method: string,
  path: string,
  opts: { headers?: Record<string, string>; body?: string | Buffer } = {},
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    // node:http sends a DELETE body unframed unless told its length.
    const length = opts.body === undefined ? {} : { "content-length": String(Buffer.byteLength(opts.body)) };
    const req = request({ host: hostname, port, method, path, headers: { ...length, ...opts.headers } });
    const collect = (status: number, headers: Record<string, string | string[] | undefined>, stream: NodeJS.ReadableStream, head = "") => {
      let body = head;
      stream.on("data", (c: Buffer) => (body += c.toString()));
      stream.on("end", () => resolve({ status, headers, body }));
      stream.on("error", reject);
    };
    req.on("response", (res) => collect(res.statusCode ?? 0, res.headers, res));
    // CONNECT's answer comes as "connect" with the raw socket; the server closes it after answering.
    req.on("connect", (res, socket, head) => collect(res.statusCode ?? 0, res.headers, socket, head.toString()));
    req.on("error", reject);
    req.end(opts.body);
  });
}

beforeAll(async () => {
  svc = await startTestService({ CODEPLANE_BODY_LIMIT_BYTES: "2048", CODEPLANE_AUTH_FAILURE_LIMIT: "0" });
  limited = await startTestService({ CODEPLANE_RATE_LIMIT_REQUESTS: "1", CODEPLANE_RATE_LIMIT_WINDOW_SECONDS: "600" });
  tenant = await svc.tenant();
  noScope = await svc.tenant(["integrations:read"]);
  noIntegrationScope = await svc.tenant(["env:read"]);
  ops = await operations(svc.url);
});
afterAll(async () => {
  await svc?.close();
  await limited?.close();
});

/**
 * The methods served on this path, as the Allow header must list them: its own
 * operations; a templated path it also matches counts only when no operation
 * names the path literally (POST /v1/integrations/github is not GET /v1/integrations/{integration_id}).
 */
function allowFor(path: string): string[] {
  const matches = (template: string) => template === path || (!path.includes("{") && new RegExp(`^${template.replace(/\{[a-z_]+\}/g, "[^/]+")}$`).test(path));
  const own = ops.filter((o) => o.path === path);
  const declared = new Set((own.length > 0 ? own : ops.filter((o) => matches(o.path))).map((o) => o.method));
  if (declared.has("GET")) declared.add("HEAD");
  declared.add("OPTIONS");
  return [...declared].sort();
}

const sortedAllow = (h: string | string[] | undefined) =>
  String(h ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean)
    .sort();

describe("methods a path does not serve", () => {
  const OTHER = ["GET", "POST", "PUT", "PATCH", "DELETE", "TRACE", "CONNECT"];

  it("answer 405 with Allow and a JSON detail, for every documented path", async () => {
    const paths = [...new Set(ops.map((o) => o.path))];
    expect(paths.length).toBeGreaterThanOrEqual(20);
    for (const path of paths) {
      const allow = allowFor(path);
      for (const method of OTHER.filter((m) => !allow.includes(m))) {
        const res = await raw(svc.url, method, concrete(path), { headers: { authorization: `Bearer ${tenant.key}` } });
        expect(res.status, `${method} ${path}`).toBe(405);
        expect(sortedAllow(res.headers.allow), `${method} ${path}`).toEqual(allow);
        expect(JSON.parse(res.body), `${method} ${path}`).toEqual({ detail: "Method Not Allowed" });
        expect(res.headers["content-type"]).toMatch(/^application\/json/);
      }
    }
  });

  it("answer 405 on the operational paths too, TRACE and CONNECT included", async () => {
    for (const path of ["/healthz", "/readyz", "/metrics", "/openapi.json", "/docs"]) {
      for (const method of ["TRACE", "CONNECT", "POST", "DELETE"]) {
        const res = await raw(svc.url, method, path);
        expect(res.status, `${method} ${path}`).toBe(405);
        expect(sortedAllow(res.headers.allow)).toEqual(["GET", "HEAD", "OPTIONS"]);
        expect(JSON.parse(res.body)).toEqual({ detail: "Method Not Allowed" });
      }
    }
  });

  it("are refused before authentication is asked for", async () => {
    const res = await raw(svc.url, "TRACE", "/v1/repositories");
    expect(res.status).toBe(405);
    expect(sortedAllow(res.headers.allow)).toEqual(["GET", "HEAD", "OPTIONS", "POST"]);
  });

  it("OPTIONS answers 204 with the same Allow", async () => {
    const res = await raw(svc.url, "OPTIONS", `/v1/repositories/${ID}`);
    expect(res.status).toBe(204);
    expect(res.body).toBe("");
    expect(sortedAllow(res.headers.allow)).toEqual(["DELETE", "GET", "HEAD", "OPTIONS", "PATCH"]);
  });

  it("an unknown path is 404 whatever the method, and CONNECT to host:port names no path", async () => {
    for (const method of ["GET", "TRACE", "CONNECT", "OPTIONS", "DELETE"]) {
      for (const path of ["/nope", "/v1/nope", `/v1/repositories/${ID}/nope`]) {
        const res = await raw(svc.url, method, path, { headers: { authorization: `Bearer ${tenant.key}` } });
        expect(res.status, `${method} ${path}`).toBe(404);
        expect(res.headers.allow).toBeUndefined();
        expect(JSON.parse(res.body)).toEqual({ detail: "Not Found" });
      }
    }
    const proxy = await raw(svc.url, "CONNECT", "example.com:443");
    expect(proxy.status).toBe(404);
    // The server is still there after the CONNECTs closed their connections.
    expect((await fetch(`${svc.url}/healthz`)).status).toBe(200);
  });
});

describe("every status the route layer can produce is documented", () => {
  /** The operations the route layer serves (all but signed webhooks). */
  const routed = () => ops.filter((o) => !o.signed);
  /** Checks the status is listed for the operation and the body matches the listed schema. */
  function expectDocumented(op: Op, what: string, res: { status: number; body: string }) {
    const label = `${op.method} ${op.path} ${what}: ${res.status} ${res.body.slice(0, 200)}`;
    const documented = op.responses[String(res.status)];
    expect(documented, `${label} is not documented`).toBeDefined();
    const ref = documented!.content?.["application/json"]?.schema?.$ref;
    const schema = ref?.endsWith("/ValidationError") ? validationErrorSchema : ref?.endsWith("/Error") ? errorBodySchema : null;
    expect(schema, `${label}: documented without an error schema`).not.toBeNull();
    expect(schema!.safeParse(JSON.parse(res.body)).success, `${label}: body does not match ${ref}`).toBe(true);
  }

  const call = (op: Op, key: string | null, path = concrete(op.path), extra: { headers?: Record<string, string>; body?: string | Buffer } = {}) =>
    raw(svc.url, op.method, path, {
      ...extra,
      headers: { ...(key && { authorization: `Bearer ${key}` }), ...extra.headers },
    });

  it("401 without or with a bad token, 403 without the scope", async () => {
    for (const op of routed()) {
      if (!op.path.startsWith("/v1/")) continue;
      if (!op.scope) {
        // A public operation (the GitHub setup callback): no token needed, but one sent must be valid.
        const bad = await call(op, "cp_notakey");
        expect(bad.status, `${op.method} ${op.path}`).toBe(401);
        expectDocumented(op, "with a bad token", bad);
        continue;
      }
      const anon = await call(op, null);
      expect(anon.status, `${op.method} ${op.path}`).toBe(401);
      expectDocumented(op, "without a token", anon);
      expectDocumented(op, "with a bad token", await call(op, "cp_notakey"));
      const forbidden = await call(op, (op.scope === "integrations:read" ? noIntegrationScope : noScope).key);
      expect(forbidden.status, `${op.method} ${op.path}`).toBe(403);
      expectDocumented(op, "without its scope", forbidden);
    }
  });

  it("422 for an invalid path or query parameter", async () => {
    const badQuery: Record<string, string> = {
      limit: "0",
      cursor: "not-a-cursor",
      after: "1".repeat(65),
      ref: "",
      path: "../x",
      status: "bogus",
      repository_id: "x",
    };
    for (const op of routed()) {
      if (op.params.some((p) => p.in === "path" && p.name.endsWith("_id"))) {
        const res = await call(
          op,
          tenant.key,
          op.path
            .replace(/\{[a-z_]+_id\}/g, "not-a-uuid")
            .replace("{commit_hash}", "main")
            .replace("{path}", "README.md"),
        );
        expect(res.status, `${op.method} ${op.path}`).toBe(422);
        expectDocumented(op, "with a bad id", res);
      }
      const q = op.params.find((p) => p.in === "query" && p.name in badQuery);
      if (q) {
        const res = await call(op, tenant.key, `${concrete(op.path)}?${q.name}=${encodeURIComponent(badQuery[q.name]!)}`);
        expect(res.status, `${op.method} ${op.path} ?${q.name}`).toBe(422);
        expectDocumented(op, `with a bad ${q.name}`, res);
      }
    }
  });

  it("422 extra_forbidden for an unknown query parameter, on every operation", async () => {
    for (const op of routed()) {
      const res = await call(op, tenant.key, `${concrete(op.path)}?no_such_parameter=1`);
      expect(res.status, `${op.method} ${op.path}: ${res.body}`).toBe(422);
      expect(JSON.parse(res.body).detail, `${op.method} ${op.path}`).toContainEqual(
        expect.objectContaining({ loc: ["query", "no_such_parameter"], type: "extra_forbidden" }),
      );
      expectDocumented(op, "with an unknown query parameter", res);
    }
  });

  it("what reading the body can answer, on every method that has one read", async () => {
    const json = { "content-type": "application/json" };
    for (const op of routed().filter((o) => o.method !== "GET")) {
      const cases: [string, { headers: Record<string, string>; body: string | Buffer }, number][] = [
        ["malformed JSON", { headers: json, body: "{" }, 422],
        ["a body over the limit", { headers: json, body: JSON.stringify({ name: "x".repeat(4096) }) }, 413],
        ["a corrupt gzip body", { headers: { ...json, "content-encoding": "gzip" }, body: "not gzip" }, 400],
        ["an unknown Content-Encoding", { headers: { ...json, "content-encoding": "zz" }, body: "{}" }, 415],
        ...(op.hasBody
          ? [
              ["a text body", { headers: { "content-type": "text/plain" }, body: "hello" }, 415] as [
                string,
                { headers: Record<string, string>; body: string },
                number,
              ],
            ]
          : []),
      ];
      for (const [what, extra, status] of cases) {
        const res = await call(op, tenant.key, concrete(op.path), extra);
        expect(res.status, `${op.method} ${op.path} with ${what}: ${res.body}`).toBe(status);
        expectDocumented(op, `with ${what}`, res);
      }
      // A well-formed gzip body is read like any other.
      const gz = await call(op, tenant.key, concrete(op.path), { headers: { ...json, "content-encoding": "gzip" }, body: gzipSync("{") });
      expect(gz.status, `${op.method} ${op.path} with gzip`).toBe(422);
    }
  });

  it("429 once the rate limit is spent", async () => {
    const t = await limited.tenant();
    const limitedOps = await operations(limited.url);
    expect((await raw(limited.url, "GET", "/v1/repositories", { headers: { authorization: `Bearer ${t.key}` } })).status).toBe(200);
    for (const op of limitedOps.filter((o) => o.path.startsWith("/v1/") && !o.signed)) {
      const res = await raw(limited.url, op.method, concrete(op.path), { headers: { authorization: `Bearer ${t.key}` } });
      expect(res.status, `${op.method} ${op.path}`).toBe(429);
      expect(res.headers["retry-after"]).toBeDefined();
      expectDocumented(op, "over the rate limit", res);
    }
  });

  it("500 is listed for every operation (unexpected failures answer it)", () => {
    for (const op of ops) expect(op.responses["500"], `${op.method} ${op.path}`).toBeDefined();
  });
});
