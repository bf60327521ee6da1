import { mkdirSync } from "node:fs";
import path from "node:path";
import { Kysely, PGliteDialect, PostgresDialect, sql } from "kysely";
import pg from "pg";
import type { Logger } from "../logger.ts";
import { lockEmbeddedDatabase } from "./embedded-lock.ts";
import { NamedStatementClient } from "./named-statements.ts";
import { typeParsers } from "./timestamp-parser.ts";
import type { Database } from "./schema.ts";

export type Db = Kysely<Database>;

export interface DatabaseHandle {
  db: Db;
  kind: "postgres" | "embedded";
  ping(): Promise<void>;
  close(): Promise<void>;
}

async function ping(db: Db): Promise<void> {
  await sql`select 1`.execute(db);
}

export interface DatabaseOptions {
  url: string | null;
  poolMax: number;
  /** Send the statements that carry a name as prepared statements (src/db/named-statements.ts); default true. */
  preparedStatements?: boolean;
  dataDir: string;
  logger: Logger;
}

export async function openDatabase(opts: DatabaseOptions): Promise<DatabaseHandle> {
  if (opts.url) return openPostgres(opts.url, opts.poolMax, opts.preparedStatements ?? true, opts.logger);
  return openEmbedded(opts.dataDir, opts.logger);
}

function openPostgres(url: string, poolMax: number, preparedStatements: boolean, logger: Logger): DatabaseHandle {
  const pool = new pg.Pool({
    connectionString: url,
    max: poolMax,
    connectionTimeoutMillis: 10_000,
    types: typeParsers,
    ...(preparedStatements && { Client: NamedStatementClient }),
  });
  // An idle client losing its server connection must not crash the process; the pool replaces it.
  pool.on("error", (err) => logger.warn({ err: err.message }, "idle database connection failed"));
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return {
    db,
    kind: "postgres",
    ping: () => ping(db),
    close: () => db.destroy(),
  };
}

async function openEmbedded(dataDir: string, logger: Logger): Promise<DatabaseHandle> {
  // PGlite is loaded only here so production images never pay for the WASM bundle at start.
  const { PGlite } = await import("@electric-sql/pglite");
  const dir = path.join(dataDir, "pgdata");
  mkdirSync(dir, { recursive: true });
  const unlock = lockEmbeddedDatabase(path.join(dataDir, "pgdata.lock"));
  logger.warn({ dir }, "DATABASE_URL is not set: using the embedded database (for development only)");
  let pglite: InstanceType<typeof PGlite>;
  try {
    pglite = new PGlite(dir);
    await pglite.waitReady;
  } catch (err) {
    unlock();
    throw err;
  }
  const db = new Kysely<Database>({ dialect: new PGliteDialect({ pglite }) });
  return {
    db,
    kind: "embedded",
    ping: () => ping(db),
    close: async () => {
      try {
        await db.destroy();
      } finally {
        unlock();
      }
    },
  };
}
