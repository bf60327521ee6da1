import { Kysely, PostgresDialect } from "kysely";
import pg from "pg";
import type { TestProject } from "vitest/node";
import { migrateToLatest } from "../../src/db/migrate.ts";
import { createRootLogger } from "../../src/logger.ts";
import { startPostgres } from "../helpers/postgres-server.ts";

// One throw-away Postgres server for the whole integration run. Test files
// each get their own database, copied from a migrated template, so they can
// run in parallel without seeing each other's rows.

export const TEMPLATE_DB = "codeplane_template";

export default async function setup(project: TestProject) {
  const server = await startPostgres();
  const admin = new pg.Client({ connectionString: server.adminUrl });
  await admin.connect();
  await admin.query(`create database ${TEMPLATE_DB}`);
  await admin.end();
  const db = new Kysely<any>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: server.urlFor(TEMPLATE_DB), max: 1 }) }) });
  await migrateToLatest(db, createRootLogger("silent"));
  await db.destroy();

  project.provide("pgAdminUrl", server.adminUrl);
  project.provide("pgPort", server.port);
  return () => server.stop();
}

declare module "vitest" {
  export interface ProvidedContext {
    pgAdminUrl: string;
    pgPort: number;
  }
}
