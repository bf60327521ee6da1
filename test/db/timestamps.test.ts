import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, type DatabaseHandle } from "../../src/db/database.ts";
import { createRootLogger } from "../../src/logger.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/service.ts";

// The service's pool reads timestamptz by position (src/db/timestamp-parser.ts):
// what Postgres writes in every session time zone must come back as the
// instant it stands for, and what pg's parser would make of it otherwise.

let database: TestDatabase;
let handle: DatabaseHandle;

beforeAll(async () => {
  database = await createTestDatabase();
  // One connection, so the session's time zone holds for every query below.
  handle = await openDatabase({ url: database.url, poolMax: 1, dataDir: "/nonexistent", logger: createRootLogger("silent") });
}, 120_000);
afterAll(async () => {
  await handle?.close();
  await database?.drop();
});

const instants = ["2026-11-23T03:58:28.123456Z", "2024-02-29T23:59:59.999Z", "1970-01-01T00:00:00Z", "1901-12-13T20:45:52Z", "9999-12-31T23:59:59.999Z"];

describe.each(["UTC", "Asia/Kolkata", "America/St_Johns", "Asia/Kathmandu", "Europe/Amsterdam", "Pacific/Chatham"])("session time zone %s", (zone) => {
  it("reads every instant back as written, to the millisecond", async () => {
    await sql`select set_config('TimeZone', ${zone}, false)`.execute(handle.db);
    for (const text of instants) {
      const { rows } = await sql<{ at: Date; shown: string }>`select ${text}::timestamptz as at, ${text}::timestamptz::text as shown`.execute(handle.db);
      expect(rows[0]!.at, `${text} shown as ${rows[0]!.shown}`).toBeInstanceOf(Date);
      expect(rows[0]!.at.toISOString()).toBe(new Date(text).toISOString());
    }
  });

  it("reads infinity and BC dates as pg's parser does", async () => {
    await sql`select set_config('TimeZone', ${zone}, false)`.execute(handle.db);
    const { rows } = await sql<{ inf: unknown; bc: Date }>`select 'infinity'::timestamptz as inf, '0044-03-15 12:00:00+00 BC'::timestamptz as bc`.execute(
      handle.db,
    );
    expect(rows[0]!.inf).toBe(Infinity);
    expect(rows[0]!.bc.getUTCFullYear()).toBe(-43);
  });
});
