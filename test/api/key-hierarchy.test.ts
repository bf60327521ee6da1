import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestService, type TestService } from "../helpers/service.ts";

// A key minted through another key (its parent) can never be more powerful
// than it: not in scopes, not in lifetime, and not after the parent is revoked.
// Key management cannot reach keys more powerful than the caller.

let svc: TestService;

beforeAll(async () => {
  svc = await startTestService();
});
afterAll(() => svc?.close());

const call = (key: string, pathname: string, init: { method?: string; json?: unknown } = {}) =>
  fetch(svc.url + pathname, {
    method: init.method ?? "GET",
    headers: { authorization: `Bearer ${key}`, ...(init.json !== undefined && { "content-type": "application/json" }) },
    ...(init.json !== undefined && { body: JSON.stringify(init.json) }),
  });

async function mint(parentKey: string, json: Record<string, unknown>) {
  const res = await call(parentKey, "/v1/auth/keys", { method: "POST", json });
  expect(res.status, JSON.stringify(await res.clone().json())).toBe(201);
  return (await res.json()) as { id: string; key: string; scopes: string[]; expires_at: string | null };
}

describe("a child key never outlives its parent", () => {
  it("gives a child of an expiring key the parent's expiry when none is asked for, and both stop together", async () => {
    const admin = await svc.tenant();
    const parentExpiry = new Date(Date.now() + 2_000);
    const parent = await mint(admin.key, { name: "expiring", expires_at: parentExpiry.toISOString() });
    const child = await mint(parent.key, { name: "child without expiry" });
    expect(child.expires_at).not.toBeNull();
    expect(new Date(child.expires_at!).getTime()).toBeLessThanOrEqual(parentExpiry.getTime());
    expect((await call(child.key, "/v1/repositories")).status).toBe(200);
    await new Promise((r) => setTimeout(r, parentExpiry.getTime() - Date.now() + 200));
    expect((await call(parent.key, "/v1/repositories")).status).toBe(401);
    expect((await call(child.key, "/v1/repositories")).status).toBe(401);
  });

  it("refuses a child that would expire after its parent, or never", async () => {
    const admin = await svc.tenant();
    const parent = await mint(admin.key, { name: "expiring", expires_at: new Date(Date.now() + 60_000).toISOString() });
    const later = await call(parent.key, "/v1/auth/keys", {
      method: "POST",
      json: { name: "later", expires_at: new Date(Date.now() + 120_000).toISOString() },
    });
    expect(later.status).toBe(422);
    expect((await later.json()).detail).toEqual([
      { loc: ["body", "expires_at"], msg: expect.stringContaining("must not be later than the calling key's expiry"), type: "value_error" },
    ]);
    const sooner = await mint(parent.key, { name: "sooner", expires_at: new Date(Date.now() + 30_000).toISOString() });
    expect(sooner.expires_at).not.toBeNull();
  });

  it("lets a key without expiry mint keys without expiry", async () => {
    const admin = await svc.tenant();
    expect((await mint(admin.key, { name: "forever" })).expires_at).toBeNull();
  });

  it("revokes a key's children and their children with it", async () => {
    const admin = await svc.tenant();
    const parent = await mint(admin.key, { name: "parent" });
    const child = await mint(parent.key, { name: "child" });
    const grandchild = await mint(child.key, { name: "grandchild" });
    const sibling = await mint(admin.key, { name: "sibling" });
    expect((await call(admin.key, `/v1/auth/keys/${parent.id}`, { method: "DELETE" })).status).toBe(204);
    for (const k of [parent, child, grandchild]) expect((await call(k.key, "/v1/repositories")).status).toBe(401);
    expect((await call(sibling.key, "/v1/repositories")).status).toBe(200);
    expect((await call(admin.key, "/v1/repositories")).status).toBe(200);
    const listed = (await (await call(admin.key, "/v1/auth/keys?limit=100")).json()).items.map((k: { id: string }) => k.id);
    expect(listed).not.toContain(child.id);
    expect(listed).not.toContain(grandchild.id);
  });

  it("lets no child created while its parent is being revoked survive the revocation", async () => {
    const admin = await svc.tenant();
    for (let round = 0; round < 3; round++) {
      const parent = await mint(admin.key, { name: `racing parent ${round}` });
      const creations = Array.from({ length: 8 }, (_, i) => call(parent.key, "/v1/auth/keys", { method: "POST", json: { name: `racer ${i}` } }));
      const revocation = call(admin.key, `/v1/auth/keys/${parent.id}`, { method: "DELETE" });
      const created = await Promise.all(creations);
      expect((await revocation).status).toBe(204);
      for (const res of created) {
        expect([201, 401, 403]).toContain(res.status);
        if (res.status === 201) expect((await call((await res.json()).key, "/v1/repositories")).status).toBe(401);
      }
    }
  });
});

describe("key management cannot reach a more powerful key", () => {
  it("does not let a keys:write-only key list or revoke the admin key, but lets it manage keys within its scopes", async () => {
    const admin = await svc.tenant();
    const adminId = (await (await call(admin.key, "/v1/auth/keys")).json()).items[0].id as string;
    const manager = await mint(admin.key, { name: "manager", scopes: ["keys:write"] });
    const reader = await mint(admin.key, { name: "reader", scopes: ["repositories:read"] });
    const peer = await mint(admin.key, { name: "peer", scopes: ["keys:write"] });

    const listed = (await (await call(manager.key, "/v1/auth/keys?limit=100")).json()).items.map((k: { id: string }) => k.id);
    expect(listed).not.toContain(adminId);
    expect(listed).not.toContain(reader.id);
    expect(listed).toEqual(expect.arrayContaining([manager.id, peer.id]));

    const res = await call(manager.key, `/v1/auth/keys/${adminId}`, { method: "DELETE" });
    expect(res.status).toBe(403);
    expect(await res.json()).toEqual({ detail: expect.stringMatching(/^Cannot revoke a key with scopes the current credential lacks: /) });
    expect((await call(manager.key, `/v1/auth/keys/${reader.id}`, { method: "DELETE" })).status).toBe(403);
    expect((await call(admin.key, "/v1/repositories")).status).toBe(200);
    expect((await call(reader.key, "/v1/repositories")).status).toBe(200);

    expect((await call(manager.key, `/v1/auth/keys/${peer.id}`, { method: "DELETE" })).status).toBe(204);
    expect((await call(peer.key, "/v1/auth/keys")).status).toBe(401);
  });

  it("documents the rules in the OpenAPI document", async () => {
    const doc = await (await fetch(`${svc.url}/openapi.json`)).json();
    const del = doc.paths["/v1/auth/keys/{key_id}"].delete;
    expect(del.description).toMatch(/scopes the calling credential lacks/);
    expect(del.responses["403"].description).toMatch(/more powerful/);
    expect(doc.paths["/v1/auth/keys"].get.description).toMatch(/only keys whose scopes/);
    expect(doc.paths["/v1/auth/keys"].post.description).toMatch(/expir/);
  });
});
