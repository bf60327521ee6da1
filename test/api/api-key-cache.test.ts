import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiKey, revokeApiKey } from "../../src/domain/auth/api-keys.ts";
import { startTestService, type Tenant, type TestService } from "../helpers/service.ts";
import { until } from "../helpers/until.ts";

// The service caches the API keys in use (src/domain/auth/api-key-cache.ts).
// Two services on one database stand for two replicas: a key warmed into one's
// cache and then revoked, re-scoped or expired anywhere else must be refused
// by it on the very next request.

let a: TestService;
let b: TestService;
let alice: Tenant;

beforeAll(async () => {
  a = await startTestService();
  b = await startTestService({ DATABASE_URL: a.databaseUrl });
  alice = await a.tenant();
});
afterAll(async () => {
  await b?.close();
  await a?.close();
});

// Bounded, so a request that never answers fails its test instead of hanging the file.
const onB = (key: string) => fetch(`${b.url}/v1/repositories`, { headers: { authorization: `Bearer ${key}` }, signal: AbortSignal.timeout(30_000) });
const warm = async (key: string) => {
  for (let i = 0; i < 3; i++) expect((await onB(key)).status).toBe(200);
};

describe("the API key cache", () => {
  it("refuses a key on one replica at once after the other revokes it through the API", async () => {
    // Repeated: a revocation that only reached the cache "soon" would lose some of these races.
    for (let i = 0; i < 20; i++) {
      const created = await (await alice.api("/v1/auth/keys", { method: "POST", json: { name: `k${i}` } })).json();
      await warm(created.key);
      expect((await alice.api(`/v1/auth/keys/${created.id}`, { method: "DELETE" })).status).toBe(204);
      expect((await onB(created.key)).status).toBe(401);
    }
  });

  it("refuses a key after a revocation on another database connection, and its children with it", async () => {
    const parent = await createApiKey(a.db, alice.accountId, { name: "parent" });
    const child = await (
      await fetch(`${a.url}/v1/auth/keys`, {
        method: "POST",
        headers: { authorization: `Bearer ${parent.key}`, "content-type": "application/json" },
        body: JSON.stringify({ name: "child" }),
      })
    ).json();
    await warm(parent.key);
    await warm(child.key);
    await revokeApiKey(a.db, alice.accountId, parent.id);
    expect((await onB(parent.key)).status).toBe(401);
    expect((await onB(child.key)).status).toBe(401);
  });

  it("applies a change made in SQL by hand: expiry, scopes, deletion", async () => {
    const expiring = await createApiKey(a.db, alice.accountId, { name: "expiring" });
    await warm(expiring.key);
    await a.db
      .updateTable("api_keys")
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where("id", "=", expiring.id)
      .execute();
    expect((await onB(expiring.key)).status).toBe(401);

    const narrowed = await createApiKey(a.db, alice.accountId, { name: "narrowed" });
    await warm(narrowed.key);
    await a.db
      .updateTable("api_keys")
      .set({ scopes: ["runs:read"] })
      .where("id", "=", narrowed.id)
      .execute();
    expect((await onB(narrowed.key)).status).toBe(403);

    const deleted = await createApiKey(a.db, alice.accountId, { name: "deleted" });
    await warm(deleted.key);
    await a.db.deleteFrom("api_keys").where("id", "=", deleted.id).execute();
    expect((await onB(deleted.key)).status).toBe(401);
  });

  it("refuses an expired key from the cache without any change to its row", async () => {
    const soon = await createApiKey(a.db, alice.accountId, { name: "soon", expires_at: new Date(Date.now() + 1500).toISOString() });
    await warm(soon.key);
    await new Promise((r) => setTimeout(r, 1600));
    expect((await onB(soon.key)).status).toBe(401);
  });

  it("trusts no cached key while its notification connection is down, and caches again once it is back", async () => {
    const key = await createApiKey(a.db, alice.accountId, { name: "through-an-outage" });
    await warm(key.key);
    // Both services' listeners; they reconnect after a second.
    await sql`select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and application_name = 'codeplane listen api_keys_changed'`.execute(
      a.db,
    );
    await new Promise((r) => setTimeout(r, 100));
    await revokeApiKey(a.db, alice.accountId, key.id);
    expect((await onB(key.key)).status).toBe(401);

    await expect
      .poll(
        async () =>
          (
            await sql<{
              n: number;
            }>`select count(*)::int as n from pg_stat_activity where datname = current_database() and application_name = 'codeplane listen api_keys_changed'`.execute(
              a.db,
            )
          ).rows[0]!.n,
        { timeout: 5000 },
      )
      .toBe(2);
    const next = await createApiKey(a.db, alice.accountId, { name: "after-the-outage" });
    await warm(next.key);
    await revokeApiKey(a.db, alice.accountId, next.id);
    expect((await onB(next.key)).status).toBe(401);
  });

  it("answers a cached key's requests when its notification connection stops answering, and replaces that connection", async () => {
    // A server process that stops (here SIGSTOP) or a socket gone half-open
    // never answers the barrier's round trip; its requests waited for ever.
    const listeners = async () =>
      (
        await sql<{
          pid: number;
        }>`select pid from pg_stat_activity where datname = current_database() and application_name = 'codeplane listen api_keys_changed'`.execute(a.db)
      ).rows.map((r) => r.pid);
    const key = await createApiKey(a.db, alice.accountId, { name: "through-a-freeze" });
    await warm(key.key);
    const frozen = await listeners();
    expect(frozen).toHaveLength(2);
    for (const pid of frozen) process.kill(pid, "SIGSTOP");
    // Whatever happens below (a request that never answers, with the code this tests broken), the backends go on.
    const thaw = () => {
      for (const pid of frozen) process.kill(pid, "SIGCONT");
    };
    const thawLater = setTimeout(thaw, 60_000);
    try {
      expect((await onB(key.key)).status).toBe(200);
      await revokeApiKey(a.db, alice.accountId, key.id);
      expect((await onB(key.key)).status).toBe(401);
      expect(b.logs.some((l) => l.includes("did not answer a round trip within"))).toBe(true);
      // b, which found its connection stuck, has made a new one (a, asked nothing meanwhile, has not looked), and caches on it again.
      await until("a new listening connection", 60_000, async () => (await listeners()).some((pid) => !frozen.includes(pid)));
      const next = await createApiKey(a.db, alice.accountId, { name: "after-the-freeze" });
      await warm(next.key);
      await revokeApiKey(a.db, alice.accountId, next.id);
      expect((await onB(next.key)).status).toBe(401);
    } finally {
      clearTimeout(thawLater);
      thaw();
    }
  }, 120_000);
});
