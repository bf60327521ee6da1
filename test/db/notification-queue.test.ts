import { randomUUID } from "node:crypto";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { randomBytes } from "node:crypto";
import { SecretBox } from "../../src/domain/crypto/secret-box.ts";
import { endpointAad, NotificationService } from "../../src/domain/notifications/notifications.ts";
import { claimNotification, enqueueEvent, recordAttempt } from "../../src/domain/notifications/notification-rows.ts";
import { seedAccountWithRepository } from "../helpers/seed.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/service.ts";

// The delivery queue's claims against a real server, as replicas race for
// them: one claim per due delivery however many claim at once, a live claim
// never taken over, an expired one taken over (at least once), and the old
// claimer's late outcome not recorded over the new one's.

let database: TestDatabase;
let accountId: string;
let endpointId: string;

beforeAll(async () => {
  database = await createTestDatabase();
  ({ accountId } = await seedAccountWithRepository(database.db));
  endpointId = randomUUID();
  await database.db
    .insertInto("notification_endpoints")
    .values({
      id: endpointId,
      account_id: accountId,
      url: "https://hooks.example.com/",
      events: ["run.failed", "run.completed"],
      key_id: "k",
      secret_ciphertext: Buffer.from("x"),
      updated_at: new Date(),
    })
    .execute();
});
afterAll(() => database?.drop());

const clear = () => database.db.deleteFrom("notification_deliveries").execute();
const event = (e: "run.failed" | "run.completed" | "run.cancelled" = "run.failed") => ({
  accountId,
  kind: "run" as const,
  subjectId: randomUUID(),
  event: e,
  occurredAt: new Date(),
});

describe("the notification queue", () => {
  it("queues only for endpoints subscribed to the event", async () => {
    await clear();
    expect(await enqueueEvent(database.db, event("run.failed"))).toBe(1);
    expect(await enqueueEvent(database.db, event("run.cancelled"))).toBe(0);
    await database.db.updateTable("notification_endpoints").set({ enabled: false }).where("id", "=", endpointId).execute();
    expect(await enqueueEvent(database.db, event("run.completed"))).toBe(0);
    await database.db.updateTable("notification_endpoints").set({ enabled: true }).where("id", "=", endpointId).execute();
  });

  it("gives each due delivery to one of many concurrent claimers", async () => {
    await clear();
    for (let i = 0; i < 5; i++) await enqueueEvent(database.db, event());
    const claims = await Promise.all(Array.from({ length: 12 }, () => claimNotification(database.db, 60, 86_400)));
    const got = claims.filter((c) => c !== undefined);
    expect(got).toHaveLength(5);
    expect(new Set(got.map((c) => c.id)).size).toBe(5);
    // Held: nobody else gets them while the lease lasts.
    expect(await claimNotification(database.db, 60, 86_400)).toBeUndefined();
  });

  it("hands an expired claim to another claimer and ignores the first claimer's late outcome", async () => {
    await clear();
    await enqueueEvent(database.db, event());
    const a = (await claimNotification(database.db, 60, 86_400))!;
    expect(a).toMatchObject({ status: "sending", attempts: 1 });
    expect(a.retry_until!.getTime() - a.last_attempt_at!.getTime()).toBeGreaterThan(86_000_000);
    // Its replica died: the lease runs out.
    await sql`update notification_deliveries set available_at = now() - interval '1 second' where id = ${a.id}`.execute(database.db);
    const b = (await claimNotification(database.db, 60, 86_400))!;
    expect(b).toMatchObject({ id: a.id, attempts: 2 });
    // The retry window began with the first attempt and stays.
    expect(b.retry_until).toEqual(a.retry_until);
    expect(await recordAttempt(database.db, a.id, a.attempts, { responseStatus: 200, error: null, delivered: true, nextAt: null })).toBe(false);
    expect(
      await recordAttempt(database.db, b.id, b.attempts, {
        responseStatus: 500,
        error: "HTTP 500",
        delivered: false,
        nextAt: new Date(Date.now() + 3_600_000),
      }),
    ).toBe(true);
    const row = await database.db.selectFrom("notification_deliveries").selectAll().where("id", "=", a.id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ status: "queued", attempts: 2, response_status: 500, last_error: "HTTP 500", delivered_at: null });
    // Not due until its next attempt.
    expect(await claimNotification(database.db, 60, 86_400)).toBeUndefined();
  });

  it("fails a delivery for good when no next attempt is given", async () => {
    await clear();
    await enqueueEvent(database.db, event());
    const a = (await claimNotification(database.db, 60, 86_400))!;
    expect(
      await recordAttempt(database.db, a.id, a.attempts, { responseStatus: null, error: "no answer within 10000 ms", delivered: false, nextAt: null }),
    ).toBe(true);
    const row = await database.db.selectFrom("notification_deliveries").selectAll().where("id", "=", a.id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ status: "failed", attempts: 1, response_status: null });
    expect(await claimNotification(database.db, 60, 86_400)).toBeUndefined();
  });
});

describe("endpoint secrets", () => {
  it("are sealed again under the current key by secrets reencrypt, and open to the same secret", async () => {
    // The queue tests' endpoint holds no real ciphertext.
    await database.db.deleteFrom("notification_endpoints").where("id", "=", endpointId).execute();
    const k1 = randomBytes(32);
    const k2 = randomBytes(32);
    const before = new NotificationService({ box: new SecretBox({ currentId: "k1", keys: { k1 } }), allowLocal: true, maxEndpointsPerAccount: 100 });
    const created = await before.create(database.db, accountId, { url: "http://127.0.0.1:9/x", events: ["run.failed"], enabled: true });
    const box = new SecretBox({ currentId: "k2", keys: { k1, k2 } });
    expect(await new NotificationService({ box, allowLocal: false, maxEndpointsPerAccount: 0 }).reencryptAll(database.db)).toBe(1);
    const row = await database.db.selectFrom("notification_endpoints").selectAll().where("id", "=", created.id).executeTakeFirstOrThrow();
    expect(row.key_id).toBe("k2");
    expect(new SecretBox({ currentId: "k2", keys: { k2 } }).open({ keyId: row.key_id, data: row.secret_ciphertext }, endpointAad(row))).toBe(created.secret);
    // Bound to its row: under another endpoint's associated data it does not open.
    expect(() => box.open({ keyId: row.key_id, data: row.secret_ciphertext }, endpointAad({ ...row, id: randomUUID() }))).toThrow();
  });
});
