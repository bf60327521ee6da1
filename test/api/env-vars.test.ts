import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EnvVarService } from "../../src/domain/env-vars/env-vars.ts";
import { SecretBox } from "../../src/domain/crypto/secret-box.ts";
import { newId } from "../../src/domain/shared/ids.ts";
import { startTestService, type Tenant, type TestService } from "../helpers/service.ts";

let svc: TestService;
let alice: Tenant;
let bob: Tenant;
let aliceRepoId: string;
let bobRepoId: string;

// Repositories are inserted directly: these tests are about variables, not git.
async function insertRepo(accountId: string): Promise<string> {
  const id = newId();
  const now = new Date();
  await svc.db
    .insertInto("repositories")
    .values({
      id,
      account_id: accountId,
      name: `r-${id.slice(-8)}`,
      url: `https://example.invalid/${id}.git`,
      provider: "git",
      default_branch: "main",
      created_at: now,
      updated_at: now,
    })
    .execute();
  return id;
}

beforeAll(async () => {
  svc = await startTestService();
  alice = await svc.tenant();
  bob = await svc.tenant();
  aliceRepoId = await insertRepo(alice.accountId);
  bobRepoId = await insertRepo(bob.accountId);
});
afterAll(() => svc?.close());

const create = (t: Tenant, json: unknown) => t.api("/v1/environment-variables", { method: "POST", json });

describe("environment variables", () => {
  it("stores secrets encrypted, never returns them and never logs them", async () => {
    const secretValue = `s3cr3t-${randomUUID()}`;
    const res = await create(alice, { name: "API_TOKEN", value: secretValue });
    expect(res.status).toBe(201);
    const created = await res.json();
    expect(created).toEqual({
      id: expect.any(String),
      name: "API_TOKEN",
      value: null,
      secret: true,
      repository_id: null,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect(await (await alice.api(`/v1/environment-variables/${created.id}`)).json()).toMatchObject({ value: null });
    const row = await svc.db.selectFrom("environment_variables").selectAll().where("id", "=", created.id).executeTakeFirstOrThrow();
    expect(row.value_ciphertext.includes(Buffer.from(secretValue))).toBe(false);
    expect(row.value_ciphertext.toString("latin1")).not.toContain("s3cr3t");
    const list = await (await alice.api("/v1/environment-variables?limit=100")).text();
    expect(list).not.toContain(secretValue);
    expect(svc.logs.join("\n")).not.toContain(secretValue);
  });

  it("returns non-secret values, still encrypted at rest", async () => {
    const created = await (await create(alice, { name: "LOG_LEVEL", value: "debug-visible", secret: false })).json();
    expect(created.value).toBe("debug-visible");
    const row = await svc.db.selectFrom("environment_variables").selectAll().where("id", "=", created.id).executeTakeFirstOrThrow();
    expect(row.value_ciphertext.includes(Buffer.from("debug-visible"))).toBe(false);
  });

  it("scopes to a repository, where it overrides the account value", async () => {
    await create(alice, { name: "REGION", value: "eu", secret: false });
    const scoped = await (await create(alice, { name: "REGION", value: "us", secret: true, repository_id: aliceRepoId })).json();
    expect(scoped.repository_id).toBe(aliceRepoId);
    const filtered = await (await alice.api(`/v1/environment-variables?repository_id=${aliceRepoId}`)).json();
    expect(filtered.items.map((v: { name: string }) => v.name)).toEqual(["REGION"]);
    const service = new EnvVarService(new SecretBox({ currentId: "k1", keys: { k1: Buffer.from(svc.encryptionKey, "base64") } }));
    const resolved = await service.resolveForRepository(svc.db, alice.accountId, aliceRepoId);
    expect(resolved.REGION).toBe("us");
    expect(resolved.LOG_LEVEL).toBe("debug-visible");
  });

  it("answers 409 for a duplicate name in the same scope", async () => {
    await create(alice, { name: "DUP", value: "1" });
    const res = await create(alice, { name: "DUP", value: "2" });
    expect(res.status).toBe(409);
    expect(await res.json()).toEqual({ detail: "An environment variable with this name already exists in this scope" });
    expect((await create(alice, { name: "DUP", value: "3", repository_id: aliceRepoId })).status).toBe(201);
  });

  it("updates values and refuses to reveal a secret by flipping the flag", async () => {
    const created = await (await create(alice, { name: "FLIP", value: "hidden" })).json();
    const flip = await alice.api(`/v1/environment-variables/${created.id}`, { method: "PATCH", json: { secret: false } });
    expect(flip.status).toBe(422);
    expect((await flip.json()).detail[0]).toMatchObject({ loc: ["body", "value"], type: "value_error" });
    const ok = await alice.api(`/v1/environment-variables/${created.id}`, { method: "PATCH", json: { secret: false, value: "now-public" } });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({ value: "now-public", secret: false });
  });

  it("keeps tenants apart: another account's variable or repository is a 404", async () => {
    const bobs = await (await create(bob, { name: "BOB_ONLY", value: "x" })).json();
    for (const [method, json] of [
      ["GET", undefined],
      ["PATCH", { value: "y" }],
      ["DELETE", undefined],
    ] as const) {
      const res = await alice.api(`/v1/environment-variables/${bobs.id}`, { method, json });
      expect(res.status).toBe(404);
      expect(await res.json()).toEqual({ detail: "Environment variable not found" });
    }
    const viaRepo = await create(alice, { name: "X", value: "1", repository_id: bobRepoId });
    expect(viaRepo.status).toBe(404);
    expect((await alice.api(`/v1/environment-variables?repository_id=${bobRepoId}`)).status).toBe(404);
    const list = await (await alice.api("/v1/environment-variables?limit=100")).json();
    expect(list.items.map((v: { id: string }) => v.id)).not.toContain(bobs.id);
    expect((await bob.api(`/v1/environment-variables/${bobs.id}`, { method: "DELETE" })).status).toBe(204);
    expect((await bob.api(`/v1/environment-variables/${bobs.id}`)).status).toBe(404);
  });

  it.each([
    ["a name with a dash", { name: "BAD-NAME", value: "x" }, "string_pattern_mismatch"],
    ["a name starting with a digit", { name: "1ABC", value: "x" }, "string_pattern_mismatch"],
    ["a missing value", { name: "OK" }, "missing"],
    ["a non-boolean secret", { name: "OK", value: "x", secret: "yes" }, "bool_type"],
    ["a malformed repository id", { name: "OK", value: "x", repository_id: "r1" }, "uuid_parsing"],
  ])("refuses %s with 422", async (_name, json, type) => {
    const res = await create(alice, json);
    expect(res.status).toBe(422);
    expect((await res.json()).detail[0].type).toBe(type);
  });
});

describe("pagination", () => {
  it("is stable under concurrent inserts: every row once, newest first", async () => {
    const carol = await svc.tenant();
    const names: string[] = [];
    for (let i = 0; i < 25; i++) {
      names.push(`V${i}`);
      expect((await create(carol, { name: `V${i}`, value: String(i) })).status).toBe(201);
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page: { items: { name: string }[]; next_cursor: string | null } = await (
        await carol.api(`/v1/environment-variables?limit=10${cursor ? `&cursor=${cursor}` : ""}`)
      ).json();
      seen.push(...page.items.map((v) => v.name));
      cursor = page.next_cursor;
      // Rows inserted mid-listing are newer than the cursor, so they can't shift the pages still to come.
      if (pages++ === 0) for (let i = 0; i < 5; i++) await create(carol, { name: `LATE${i}`, value: "x" });
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual([...names].reverse());
  });
});
