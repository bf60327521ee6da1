import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, type DatabaseHandle } from "../../src/db/database.ts";
import { listRepositories, REPOSITORY_LIST_COLUMNS, REPOSITORY_PAGE_SQL } from "../../src/domain/repositories/repository-rows.ts";
import { newId } from "../../src/domain/shared/ids.ts";
import { keysetPage } from "../../src/domain/shared/keyset.ts";
import { createRootLogger } from "../../src/logger.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/service.ts";

// Hot statements are named (src/db/named-statements.ts): Postgres prepares
// them once per connection and, after five executions, may keep one generic
// plan for every parameter. Each must answer what the query builder's version
// answers, be prepared under its name (and not when that is turned off), and
// keep a generic plan that reads only the page.

const silent = createRootLogger("silent");
let database: TestDatabase;
let handle: DatabaseHandle;
let accountId: string;
let otherId: string;

beforeAll(async () => {
  database = await createTestDatabase();
  // One connection: its prepared statements are the ones the test looks at.
  handle = await openDatabase({ url: database.url, poolMax: 1, dataDir: "/nonexistent", logger: silent });
  accountId = newId();
  otherId = newId();
  for (const [id, name] of [
    [accountId, "big"],
    [otherId, "other"],
  ] as const) {
    await database.db.insertInto("accounts").values({ id, name, created_at: new Date() }).execute();
  }
  for (const [account, rows] of [
    [accountId, 5000],
    [otherId, 30],
  ] as const) {
    await sql`insert into repositories (id, account_id, name, url, provider, created_at, updated_at)
      select gen_random_uuid(), ${account}, 'r' || n, 'https://h/r' || n, 'git', now(), now() from generate_series(1, ${rows}) n`.execute(database.db);
  }
  await sql`analyze repositories`.execute(database.db);
}, 120_000);
afterAll(async () => {
  await handle?.close();
  await database?.drop();
});

describe("the page of repositories", () => {
  it.each([1, 20, 100])("is keysetPage's page on every step of a walk by cursor (limit %i)", async (limit) => {
    let cursor: string | undefined;
    let seen = 0;
    for (;;) {
      const page = { limit, cursor };
      const named = await listRepositories(handle.db, otherId, page);
      const built = await keysetPage(
        handle.db
          .selectFrom("repositories")
          .select([...REPOSITORY_LIST_COLUMNS])
          .where("account_id", "=", otherId),
        page,
      ).execute();
      expect(named).toEqual(built);
      if (named.length <= limit) break;
      seen += limit;
      cursor = named[limit - 1]!.id;
    }
    expect(seen).toBe(Math.floor(29 / limit) * limit);
  });

  it("is prepared on the connection under its names, and not when prepared statements are off", async () => {
    await listRepositories(handle.db, accountId, { limit: 20 });
    await listRepositories(handle.db, accountId, { limit: 20, cursor: newId() });
    const { rows } = await sql<{ name: string }>`select name from pg_prepared_statements`.execute(handle.db);
    expect(rows.map((r) => r.name)).toEqual(expect.arrayContaining(["repositories_page", "repositories_page_after"]));

    const unnamed = await openDatabase({ url: database.url, poolMax: 1, preparedStatements: false, dataDir: "/nonexistent", logger: silent });
    try {
      expect(await listRepositories(unnamed.db, accountId, { limit: 3 })).toHaveLength(4);
      const none = await sql<{ name: string }>`select name from pg_prepared_statements`.execute(unnamed.db);
      expect(none.rows).toEqual([]);
    } finally {
      await unnamed.close();
    }
  });

  it.each([
    ["first page", REPOSITORY_PAGE_SQL.first],
    ["page after a cursor", REPOSITORY_PAGE_SQL.after],
  ] as const)("keeps a generic plan for the %s that reads only the page", async (_name, text) => {
    // What Postgres may settle on after five executions, forced: it knows neither the account nor the limit.
    await sql`set plan_cache_mode = force_generic_plan`.execute(handle.db);
    try {
      await sql.raw(`prepare generic_page as ${text}`).execute(handle.db);
      const middle = await sql<{ id: string }>`select id from repositories where account_id = ${accountId} order by id desc offset 2500 limit 1`.execute(
        handle.db,
      );
      const args = [`'${accountId}'`, "21", ...(text === REPOSITORY_PAGE_SQL.after ? [`'${middle.rows[0]!.id}'`] : [])].join(", ");
      const { rows } = await sql.raw<{ "QUERY PLAN": unknown }>(`explain (analyze, format json) execute generic_page(${args})`).execute(handle.db);
      await sql`deallocate generic_page`.execute(handle.db);
      const plan = JSON.stringify(rows[0]!["QUERY PLAN"]);
      expect(plan).not.toContain("Seq Scan");
      expect(plan).not.toContain('"Node Type":"Sort"');
      // Every scan of repositories returns at most the page and the row after it.
      const scanned = [...plan.matchAll(/"Relation Name":"repositories"[^}]*?"Actual Rows":(\d+)/g)].map((m) => Number(m[1]));
      expect(scanned.length).toBeGreaterThan(0);
      for (const n of scanned) expect(n).toBeLessThanOrEqual(21);
    } finally {
      await sql`reset plan_cache_mode`.execute(handle.db);
    }
  });
});
