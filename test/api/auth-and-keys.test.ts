import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestService, type Tenant, type TestService } from "../helpers/service.ts";

let svc: TestService;
let alice: Tenant;
let bob: Tenant;

beforeAll(async () => {
  svc = await startTestService();
  alice = await svc.tenant();
  bob = await svc.tenant();
});
afterAll(() => svc?.close());

const NOT_AUTHENTICATED = { detail: "Not authenticated" };

describe("authentication", () => {
  it("answers 401 with the contract body and WWW-Authenticate when no token is sent", async () => {
    const res = await fetch(`${svc.url}/v1/repositories`);
    expect(res.status).toBe(401);
    // RFC 9728 section 5.1: the challenge says where the protected-resource metadata is.
    expect(res.headers.get("www-authenticate")).toBe(`Bearer resource_metadata="${svc.url}/.well-known/oauth-protected-resource"`);
    expect(await res.json()).toEqual(NOT_AUTHENTICATED);
  });

  it.each([
    ["a non-bearer scheme", "Basic YWxhZGRpbjpvcGVuc2VzYW1l"],
    ["garbage", "Bearer not-a-key"],
    ["a well-formed key that was never issued", "Bearer cp_" + "A".repeat(38)],
    ["an empty bearer", "Bearer "],
  ])("answers 401 for %s", async (_name, header) => {
    const res = await fetch(`${svc.url}/v1/repositories`, { headers: { authorization: header } });
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual(NOT_AUTHENTICATED);
  });

  it("accepts a valid key and answers the list shape", async () => {
    const res = await alice.api("/v1/repositories");
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ items: [], next_cursor: null });
  });

  it("stops accepting a key at once when it is revoked", async () => {
    const created = await (await alice.api("/v1/auth/keys", { method: "POST", json: { name: "short-lived" } })).json();
    const use = () => fetch(`${svc.url}/v1/repositories`, { headers: { authorization: `Bearer ${created.key}` } });
    expect((await use()).status).toBe(200);
    expect((await alice.api(`/v1/auth/keys/${created.id}`, { method: "DELETE" })).status).toBe(204);
    const after = await use();
    expect(after.status).toBe(401);
    expect(await after.json()).toEqual(NOT_AUTHENTICATED);
  });

  it("refuses an expired key", async () => {
    const created = await (
      await alice.api("/v1/auth/keys", { method: "POST", json: { name: "expiring", expires_at: new Date(Date.now() + 60_000).toISOString() } })
    ).json();
    await svc.db
      .updateTable("api_keys")
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where("id", "=", created.id)
      .execute();
    const res = await fetch(`${svc.url}/v1/repositories`, { headers: { authorization: `Bearer ${created.key}` } });
    expect(res.status).toBe(401);
  });

  it("answers 403 when the key lacks the scope", async () => {
    const reader = await svc.tenant(["repositories:read"]);
    expect((await reader.api("/v1/repositories")).status).toBe(200);
    const res = await reader.api("/v1/repositories", { method: "POST", json: { url: "https://example.invalid/x.git" } });
    expect(res.status).toBe(403);
    expect(await res.json()).toEqual({ detail: "Missing scope: repositories:write" });
    expect((await reader.api("/v1/environment-variables")).status).toBe(403);
  });

  it("echoes a sane X-Request-Id and generates one otherwise", async () => {
    const echoed = await fetch(`${svc.url}/healthz`, { headers: { "x-request-id": "abc-123" } });
    expect(echoed.headers.get("x-request-id")).toBe("abc-123");
    const generated = await fetch(`${svc.url}/healthz`, { headers: { "x-request-id": "bad id\twith tab" } });
    expect(generated.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
    const onError = await fetch(`${svc.url}/v1/repositories`);
    expect(onError.headers.get("x-request-id")).toBeTruthy();
  });

  it("never logs a bearer token", async () => {
    await alice.api("/v1/repositories");
    expect(svc.logs.join("\n")).not.toContain(alice.key);
  });
});

describe("API keys", () => {
  it("creates a key shown once, lists it without the secret, with prefix and last use", async () => {
    const res = await alice.api("/v1/auth/keys", { method: "POST", json: { name: "ci", scopes: ["runs:read", "runs:write"] } });
    expect(res.status).toBe(201);
    const created = await res.json();
    expect(created).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: "ci",
      prefix: created.key.slice(0, 11),
      key: expect.stringMatching(/^cp_[0-9A-Za-z]{38}$/),
      scopes: ["runs:read", "runs:write"],
      created_at: expect.any(String),
      expires_at: null,
    });
    await fetch(`${svc.url}/v1/runs-does-not-exist`, { headers: { authorization: `Bearer ${created.key}` } });
    const list = await (await alice.api("/v1/auth/keys")).json();
    const listed = list.items.find((k: { id: string }) => k.id === created.id);
    expect(listed).toMatchObject({ id: created.id, prefix: created.prefix, scopes: ["runs:read", "runs:write"] });
    expect(listed.last_used_at).not.toBeNull();
    expect(JSON.stringify(list)).not.toContain(created.key);
    const row = await svc.db.selectFrom("api_keys").selectAll().where("id", "=", created.id).executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toContain(created.key.slice(3));
  });

  it("gives a key without scopes every scope of its creator, and refuses to escalate", async () => {
    const limited = await svc.tenant(["keys:write", "repositories:read"]);
    const inherit = await (await limited.api("/v1/auth/keys", { method: "POST", json: { name: "inherit" } })).json();
    expect(inherit.scopes.sort()).toEqual(["keys:write", "repositories:read"]);
    const res = await limited.api("/v1/auth/keys", { method: "POST", json: { name: "escalate", scopes: ["env:read"] } });
    expect(res.status).toBe(422);
    expect((await res.json()).detail[0]).toMatchObject({ loc: ["body", "scopes"], type: "value_error" });
  });

  it("does not let one account see or revoke another's keys", async () => {
    const created = await (await bob.api("/v1/auth/keys", { method: "POST", json: { name: "bobs" } })).json();
    const aliceList = await (await alice.api("/v1/auth/keys?limit=100")).json();
    expect(aliceList.items.map((k: { id: string }) => k.id)).not.toContain(created.id);
    const res = await alice.api(`/v1/auth/keys/${created.id}`, { method: "DELETE" });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ detail: "API key not found" });
  });
});

describe("request validation", () => {
  const post = (json: unknown) => alice.api("/v1/auth/keys", { method: "POST", json });
  it.each([
    ["missing field", {}, [{ loc: ["body", "name"], msg: "Field required", type: "missing" }]],
    ["wrong type", { name: 5 }, [{ loc: ["body", "name"], msg: "Input should be a valid string", type: "string_type" }]],
    ["too long", { name: "x".repeat(101) }, [{ loc: ["body", "name"], msg: "String should have at most 100 characters", type: "string_too_long" }]],
    ["unknown field", { name: "a", admin: true }, [{ loc: ["body", "admin"], msg: "Extra inputs are not permitted", type: "extra_forbidden" }]],
    ["bad enum", { name: "a", scopes: ["root"] }, [{ loc: ["body", "scopes", 0], type: "enum" }]],
    ["bad datetime", { name: "a", expires_at: "tomorrow" }, [{ loc: ["body", "expires_at"], type: "datetime_parsing" }]],
    ["not an object", [1, 2], [{ loc: ["body"], type: "model_type" }]],
    [
      "several problems at once",
      { name: 1, extra: 2 },
      [
        { loc: ["body", "name"], type: "string_type" },
        { loc: ["body", "extra"], type: "extra_forbidden" },
      ],
    ],
  ])("body: %s", async (_name, body, expected) => {
    const res = await post(body);
    expect(res.status).toBe(422);
    const json = await res.json();
    expect(Object.keys(json)).toEqual(["detail"]);
    expect(json.detail).toHaveLength(expected.length);
    expected.forEach((e, i) => expect(json.detail[i]).toMatchObject(e));
    for (const d of json.detail) expect(Object.keys(d).sort()).toEqual(["loc", "msg", "type"]);
  });

  it("answers malformed JSON with json_invalid", async () => {
    const res = await alice.api("/v1/auth/keys", { method: "POST", body: '{"name": ', headers: { "content-type": "application/json" } });
    expect(res.status).toBe(422);
    expect(await res.json()).toEqual({ detail: [{ loc: ["body"], msg: "JSON decode error", type: "json_invalid" }] });
  });

  it("answers a missing body with missing", async () => {
    const res = await alice.api("/v1/auth/keys", { method: "POST" });
    expect(res.status).toBe(422);
    expect(await res.json()).toEqual({ detail: [{ loc: ["body"], msg: "Field required", type: "missing" }] });
  });

  it.each([
    ["limit=abc", { loc: ["query", "limit"], type: "int_parsing" }],
    ["limit=0", { loc: ["query", "limit"], type: "greater_than_equal" }],
    ["limit=101", { loc: ["query", "limit"], type: "less_than_equal" }],
    ["cursor=not-a-cursor!", { loc: ["query", "cursor"], type: "string_pattern_mismatch" }],
    ["cursor=not-a-cursor", { loc: ["query", "cursor"], type: "value_error" }],
    [`cursor=${Buffer.from("v1:nope").toString("base64url")}`, { loc: ["query", "cursor"], type: "value_error" }],
  ])("query: %s", async (qs, expected) => {
    const res = await alice.api(`/v1/repositories?${qs}`);
    expect(res.status).toBe(422);
    expect((await res.json()).detail).toEqual([expect.objectContaining(expected)]);
  });

  it("validates path parameters", async () => {
    const res = await alice.api("/v1/repositories/not-a-uuid");
    expect(res.status).toBe(422);
    expect((await res.json()).detail).toEqual([{ loc: ["path", "repository_id"], msg: "Input should be a valid UUID", type: "uuid_parsing" }]);
  });

  it("answers 413 for a body over the limit", async () => {
    const res = await alice.api("/v1/environment-variables", { method: "POST", json: { name: "BIG", value: "x".repeat(1_100_000) } });
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual({ detail: "Request body too large" });
  });

  it("answers 415 for a body that is not JSON", async () => {
    const res = await alice.api("/v1/auth/keys", { method: "POST", body: "name=x", headers: { "content-type": "application/x-www-form-urlencoded" } });
    expect(res.status).toBe(415);
    expect(await res.json()).toEqual({ detail: "Unsupported Media Type: send application/json" });
  });

  it("reads every application/*+json body as JSON, so none passes the type check unparsed (merge-patch read as a missing body before)", async () => {
    for (const [type, name] of [
      ["application/merge-patch+json", "MERGE_PATCH_TYPED"],
      ["application/vnd.api+json; charset=utf-8", "VND_TYPED"],
    ] as const) {
      const res = await alice.api("/v1/environment-variables", {
        method: "POST",
        body: JSON.stringify({ name, value: "v" }),
        headers: { "content-type": type },
      });
      expect(res.status, `${type}: ${await res.clone().text()}`).toBe(201);
      expect((await res.json()).name).toBe(name);
    }
  });

  it("answers 404 and 405 as JSON", async () => {
    const missing = await alice.api("/v1/nothing-here");
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ detail: "Not Found" });
    const wrong = await alice.api("/v1/repositories", { method: "PUT", json: {} });
    expect(wrong.status).toBe(405);
    expect(await wrong.json()).toEqual({ detail: "Method Not Allowed" });
  });
});

describe("rate limiting", () => {
  it("answers 429 with Retry-After once a key spends its budget, per key", async () => {
    const limited = await startTestService({ CODEPLANE_RATE_LIMIT_REQUESTS: "3", CODEPLANE_RATE_LIMIT_WINDOW_SECONDS: "60" });
    try {
      const a = await limited.tenant();
      const b = await limited.tenant();
      const statuses: number[] = [];
      let last: Response | undefined;
      for (let i = 0; i < 4; i++) {
        last = await a.api("/v1/repositories");
        statuses.push(last.status);
        if (i === 0) {
          expect(last.headers.get("ratelimit-limit")).toBe("3");
          expect(last.headers.get("ratelimit-remaining")).toBe("2");
        }
      }
      expect(statuses).toEqual([200, 200, 200, 429]);
      expect(Number(last!.headers.get("retry-after"))).toBeGreaterThan(0);
      expect(await last!.json()).toEqual({ detail: "Too many requests" });
      expect((await b.api("/v1/repositories")).status).toBe(200);
    } finally {
      await limited.close();
    }
  });
});

describe("operations endpoints", () => {
  it("serves health, readiness and metrics", async () => {
    expect(await (await fetch(`${svc.url}/healthz`)).json()).toEqual({ status: "ok" });
    // This service has no cluster configured: the contract's readiness covers Postgres and Kubernetes.
    const ready = await fetch(`${svc.url}/readyz`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toEqual({
      status: "not ready",
      checks: { database: "ok", kubernetes: "no cluster configured: set KUBECONFIG, or run in a cluster" },
    });
    const metrics = await (await fetch(`${svc.url}/metrics`)).text();
    expect(metrics).toContain("codeplane_http_requests_total");
    expect(metrics).toMatch(/route="\/v1\/repositories"/);
  });

  it("serves an OpenAPI 3.1 document that covers every endpoint, and the rendered reference", async () => {
    const doc = await (await fetch(`${svc.url}/openapi.json`)).json();
    expect(doc.openapi).toBe("3.1.0");
    expect(Object.keys(doc.paths).sort()).toEqual([
      "/v1/auth/keys",
      "/v1/auth/keys/{key_id}",
      "/v1/environment-variables",
      "/v1/environment-variables/{env_var_id}",
      "/v1/environments",
      "/v1/environments/{key}",
      "/v1/integrations",
      "/v1/integrations/github",
      "/v1/integrations/github/callback",
      "/v1/integrations/github/install",
      "/v1/integrations/{integration_id}",
      "/v1/integrations/{integration_id}/repositories",
      "/v1/notification-endpoints",
      "/v1/notification-endpoints/{endpoint_id}",
      "/v1/notification-endpoints/{endpoint_id}/deliveries",
      "/v1/notification-endpoints/{endpoint_id}/deliveries/{delivery_id}/redeliver",
      "/v1/oauth/clients",
      "/v1/oauth/clients/{client_id}",
      "/v1/oauth/grants",
      "/v1/oauth/grants/{grant_id}",
      "/v1/repositories",
      "/v1/repositories/{repository_id}",
      "/v1/repositories/{repository_id}/analysis",
      "/v1/repositories/{repository_id}/analysis/{commit_hash}",
      "/v1/repositories/{repository_id}/analysis/{commit_hash}/cancel",
      "/v1/repositories/{repository_id}/analysis/{commit_hash}/logs/stream",
      "/v1/repositories/{repository_id}/commits/{ref}",
      "/v1/repositories/{repository_id}/files",
      "/v1/repositories/{repository_id}/files/{path}",
      "/v1/repositories/{repository_id}/refs",
      "/v1/repositories/{repository_id}/{commit_hash}/runs",
      "/v1/runs",
      "/v1/runs/events",
      "/v1/runs/{run_id}",
      "/v1/runs/{run_id}/cancel",
      "/v1/runs/{run_id}/logs",
      "/v1/runs/{run_id}/logs/groups",
      "/v1/runs/{run_id}/logs/search",
      "/v1/runs/{run_id}/logs/setup",
      "/v1/runs/{run_id}/logs/stderr",
      "/v1/runs/{run_id}/logs/stdout",
      "/v1/runs/{run_id}/logs/stream",
      "/v1/runs/{run_id}/metrics",
      "/v1/runs/{run_id}/outputs",
      "/v1/runs/{run_id}/outputs.tar.gz",
      "/v1/runs/{run_id}/outputs/{path}",
      "/v1/runs/{run_id}/rerun",
      "/v1/webhooks/github",
      "/v1/webhooks/github/deliveries",
    ]);
    expect(doc.components.schemas.Repository).toBeDefined();
    expect(doc.components.schemas.Analysis).toBeDefined();
    // One analysis per commit: a repeated POST answers 200 with the existing one.
    expect(doc.paths["/v1/repositories/{repository_id}/analysis/{commit_hash}"].post.responses).toHaveProperty("200");
    expect(doc.paths["/v1/repositories/{repository_id}/analysis/{commit_hash}"].post.responses).toHaveProperty("201");
    expect(doc.paths["/v1/repositories"].post.responses["422"]).toBeDefined();
    const docs = await fetch(`${svc.url}/docs`);
    expect(docs.headers.get("content-type")).toContain("text/html");
    const html = await docs.text();
    expect(html).toContain("/docs/assets/swagger-ui-bundle.js");
    expect((await fetch(`${svc.url}/docs/assets/swagger-ui-bundle.js`)).status).toBe(200);
  });
});
