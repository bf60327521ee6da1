// Idempotency-Key on run creation, against a real Postgres: concurrent duplicates make one run,
// the same key with another request is refused, a failed first request frees the key, and keys
// are per account and last 24 hours.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createIdempotently, requestFingerprint } from "../../src/domain/runs/idempotency.ts";
import { findRun, toRun } from "../../src/domain/runs/run-rows.ts";
import type { Run } from "../../src/domain/runs/runs.schemas.ts";
import { insertRunRow, seedAccountWithRepository } from "../helpers/seed.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/service.ts";

let database: TestDatabase;
let accountId: string;
let repositoryId: string;

beforeAll(async () => {
  database = await createTestDatabase();
  ({ accountId, repositoryId } = await seedAccountWithRepository(database.db));
});
afterAll(async () => {
  await database?.drop();
});

/** A creation that takes a while and counts how often it ran. */
function creator(account = accountId, repository = repositoryId, delayMs = 300) {
  const made: string[] = [];
  return {
    made,
    create: async (): Promise<Run> => {
      await new Promise((r) => setTimeout(r, delayMs));
      const id = await insertRunRow(database.db, { accountId: account, repositoryId: repository, status: "pending" });
      made.push(id);
      return toRun((await findRun(database.db, account, id))!);
    },
    read: async (id: string): Promise<Run> => toRun((await findRun(database.db, account, id))!),
  };
}

const fp = (body: unknown) => requestFingerprint("createRun", [repositoryId, "main"], body);

describe("Idempotency-Key", () => {
  it("makes one run of concurrent duplicates, and answers each with it", async () => {
    const c = creator();
    const results = await Promise.all(
      Array.from({ length: 8 }, () => createIdempotently(database.db, accountId, "k-concurrent", fp({ command: ["a"] }), c.create, c.read)),
    );
    expect(c.made).toHaveLength(1);
    expect(new Set(results.map((r) => r.run.run_id))).toEqual(new Set(c.made));
    expect(results.filter((r) => !r.replayed)).toHaveLength(1);
    // And later, the same.
    const again = await createIdempotently(database.db, accountId, "k-concurrent", fp({ command: ["a"] }), c.create, c.read);
    expect(again).toMatchObject({ run: { run_id: c.made[0] }, replayed: true });
    expect(c.made).toHaveLength(1);
  });

  it("sees the body, not its key order, and refuses the key with another body or path with 409", async () => {
    const c = creator();
    await createIdempotently(database.db, accountId, "k-body", fp({ command: ["a"], compute_type: "x" }), c.create, c.read);
    const same = await createIdempotently(database.db, accountId, "k-body", fp({ compute_type: "x", command: ["a"] }), c.create, c.read);
    expect(same.replayed).toBe(true);
    await expect(createIdempotently(database.db, accountId, "k-body", fp({ command: ["b"] }), c.create, c.read)).rejects.toMatchObject({ kind: "conflict" });
    await expect(
      createIdempotently(database.db, accountId, "k-body", requestFingerprint("rerunRun", [c.made[0]!], {}), c.create, c.read),
    ).rejects.toMatchObject({ kind: "conflict" });
    expect(c.made).toHaveLength(1);
  });

  it("frees the key when the first request fails, so a retry creates the run", async () => {
    const c = creator();
    const failing = async (): Promise<Run> => {
      throw new Error("Kubernetes is not reachable");
    };
    await expect(createIdempotently(database.db, accountId, "k-fail", fp({}), failing, c.read)).rejects.toThrow(/not reachable/);
    const retried = await createIdempotently(database.db, accountId, "k-fail", fp({}), c.create, c.read);
    expect(retried.replayed).toBe(false);
    expect(c.made).toEqual([retried.run.run_id]);
  });

  it("keeps keys per account", async () => {
    const other = await seedAccountWithRepository(database.db);
    const mine = creator();
    const theirs = creator(other.accountId, other.repositoryId);
    const a = await createIdempotently(database.db, accountId, "k-shared", fp({}), mine.create, mine.read);
    const b = await createIdempotently(database.db, other.accountId, "k-shared", fp({}), theirs.create, theirs.read);
    expect(a.run.run_id).not.toBe(b.run.run_id);
    expect([a.replayed, b.replayed]).toEqual([false, false]);
  });

  it("forgets a key after 24 hours, and takes over a claim whose request died", async () => {
    const c = creator();
    const first = await createIdempotently(database.db, accountId, "k-old", fp({}), c.create, c.read);
    await database.db
      .updateTable("run_idempotency_keys")
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where("key", "=", "k-old")
      .execute();
    const later = await createIdempotently(database.db, accountId, "k-old", fp({ command: ["other"] }), c.create, c.read);
    expect(later.replayed).toBe(false);
    expect(later.run.run_id).not.toBe(first.run.run_id);

    // A claim with no run, 11 minutes old: its process died mid-creation.
    await database.db
      .insertInto("run_idempotency_keys")
      .values({
        account_id: accountId,
        key: "k-dead",
        fingerprint: fp({}),
        claim: crypto.randomUUID(),
        run_id: null,
        claimed_at: new Date(Date.now() - 11 * 60_000),
        expires_at: new Date(Date.now() + 3600_000),
      })
      .execute();
    const taken = await createIdempotently(database.db, accountId, "k-dead", fp({}), c.create, c.read);
    expect(taken.replayed).toBe(false);
  });

  it("answers 409 to a duplicate whose first request is still creating after the wait", async () => {
    const slow = creator(accountId, repositoryId, 1500);
    const first = createIdempotently(database.db, accountId, "k-slow", fp({}), slow.create, slow.read);
    await new Promise((r) => setTimeout(r, 200));
    await expect(createIdempotently(database.db, accountId, "k-slow", fp({}), slow.create, slow.read, { waitMs: 300 })).rejects.toMatchObject({
      kind: "conflict",
      message: expect.stringMatching(/still creating/),
    });
    expect((await first).replayed).toBe(false);
    expect(slow.made).toHaveLength(1);
  });
});
