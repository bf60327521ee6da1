import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Scope } from "../../src/domain/auth/scopes.ts";
import { startTestService, type Tenant, type TestService } from "../helpers/service.ts";

// Every /v1 operation in the OpenAPI document (so a new endpoint is covered
// the day it is added) refuses a missing token with 401 and a key without
// the operation's scope with 403, before it looks at anything else.

let svc: TestService;
const ops: { method: string; path: string; scope: Scope }[] = [];
const tenants = new Map<string, Tenant>();

const ID = "0190b1c2-3d4e-7f00-8a1b-2c3d4e5f6a7b";
const concrete = (p: string) =>
  p
    .replace(/\{[a-z_]+_id\}/g, ID)
    .replace("{commit_hash}", "main")
    .replace("{path}", "README.md");

beforeAll(async () => {
  svc = await startTestService();
  const doc = await (await fetch(`${svc.url}/openapi.json`)).json();
  for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, { security?: Record<string, string[]>[] }>>)) {
    for (const [method, op] of Object.entries(item)) {
      const scope = op.security?.[0]?.oauth2?.[0] as Scope | undefined;
      if (path.startsWith("/v1/") && scope) ops.push({ method: method.toUpperCase(), path, scope });
    }
  }
  // A key with one scope that none of the operations below need.
  for (const scope of new Set(ops.map((o) => o.scope))) {
    const other: Scope = scope === "integrations:read" ? "integrations:write" : "integrations:read";
    tenants.set(scope, await svc.tenant([other]));
  }
});
afterAll(() => svc?.close());

describe("every endpoint", () => {
  it("is documented with its scope", () => {
    expect(ops.length).toBeGreaterThanOrEqual(20);
  });

  it("answers 401 without a token and 403 without its scope", async () => {
    for (const op of ops) {
      const url = svc.url + concrete(op.path);
      const init = {
        method: op.method,
        headers: { "content-type": "application/json" },
        ...(op.method === "POST" || op.method === "PATCH" ? { body: "{}" } : {}),
      };
      const anon = await fetch(url, init);
      expect(anon.status, `${op.method} ${op.path} without a token`).toBe(401);
      expect(await anon.json()).toEqual({ detail: "Not authenticated" });
      const t = tenants.get(op.scope)!;
      const res = await t.api(concrete(op.path), { method: op.method, ...(init.body && { json: {} }) });
      expect(res.status, `${op.method} ${op.path} without ${op.scope}`).toBe(403);
      expect(await res.json()).toEqual({ detail: `Missing scope: ${op.scope}` });
    }
  });
});
