import { Kysely, PostgresDialect } from "kysely";
import pg from "pg";
import { describe, expect, it } from "vitest";
import type { Database } from "../../src/db/schema.ts";
import { migrateToLatest } from "../../src/db/migrate.ts";
import { migrationProvider } from "../../src/db/migrations/index.ts";
import { createRootLogger } from "../../src/logger.ts";
import { createTestDatabase } from "../helpers/service.ts";

// Every replica migrates on start (CODEPLANE_MIGRATE_ON_START), so on a fresh
// install several migrate one empty database at the same moment, each through
// its own pool. All must succeed and every migration must run exactly once.

describe("migrations run by several processes at once", () => {
  it("all succeed on an empty database, each migration applied once", { timeout: 120_000 }, async () => {
    const all = Object.keys(await migrationProvider.getMigrations()).sort();
    for (let round = 0; round < 5; round++) {
      const database = await createTestDatabase({ empty: true });
      const pools = Array.from(
        { length: 4 },
        () => new Kysely<Database>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: database.url, max: 3 }) }) }),
      );
      try {
        const outcomes = await Promise.allSettled(pools.map((db) => migrateToLatest(db, createRootLogger("silent"))));
        expect(
          outcomes.map((o) => (o.status === "rejected" ? String(o.reason) : "ok")),
          `round ${round}`,
        ).toEqual(["ok", "ok", "ok", "ok"]);
        const applied = outcomes.flatMap((o) => (o.status === "fulfilled" ? o.value.applied : []));
        expect(applied.sort()).toEqual(all);
      } finally {
        for (const db of pools) await db.destroy();
        await database.drop();
      }
    }
  });
});
