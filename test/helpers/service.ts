import { randomBytes, randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Kysely, PostgresDialect, sql } from "kysely";
import pg from "pg";
import { inject } from "vitest";
import { loadConfig } from "../../src/config.ts";
import type { Database } from "../../src/db/schema.ts";
import { createAccount } from "../../src/domain/accounts/accounts.ts";
import { createApiKey } from "../../src/domain/auth/api-keys.ts";
import type { Scope } from "../../src/domain/auth/scopes.ts";
import { createRootLogger } from "../../src/logger.ts";
import { startService, type Service } from "../../src/service.ts";
import { TEMPLATE_DB } from "../setup/postgres.ts";

export interface TestDatabase {
  url: string;
  db: Kysely<Database>;
  drop(): Promise<void>;
}

/** A fresh database copied from the migrated template (or empty): isolated per test file. */
export async function createTestDatabase(opts: { empty?: boolean } = {}): Promise<TestDatabase> {
  const name = `t_${randomUUID().replaceAll("-", "")}`;
  const admin = new pg.Client({ connectionString: inject("pgAdminUrl") });
  await admin.connect();
  await admin.query(`create database ${name} template ${opts.empty ? "template0" : TEMPLATE_DB}`);
  await admin.end();
  const url = `postgres://postgres@127.0.0.1:${inject("pgPort")}/${name}`;
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url, max: 4 }) }) });
  // A copy of the migrated template would share its installation id; each test
  // database is its own installation, as a freshly migrated one would be.
  if (!opts.empty) await sql`update installation set id = gen_random_uuid()`.execute(db);
  return {
    url,
    db,
    async drop() {
      await db.destroy();
      const a = new pg.Client({ connectionString: inject("pgAdminUrl") });
      await a.connect();
      // Without FORCE: a closing pool may still be saying goodbye, and forcing
      // would hit that connection with an error nobody listens for any more.
      for (let i = 0; ; i++) {
        try {
          await a.query(`drop database if exists ${name}`);
          break;
        } catch (err) {
          if ((err as { code?: string }).code !== "55006" || i >= 50) throw err;
          await new Promise((r) => setTimeout(r, 100));
        }
      }
      await a.end();
    },
  };
}

export interface Tenant {
  accountId: string;
  key: string;
  /** fetch() against the service with this tenant's key. */
  api(pathname: string, init?: RequestInit & { json?: unknown }): Promise<Response>;
}

export interface TestService {
  url: string;
  service: Service;
  db: Kysely<Database>;
  /** Every log line the service wrote, as raw JSON text. */
  logs: string[];
  encryptionKey: string;
  /** The database this service was started on (its own, unless DATABASE_URL was given). */
  databaseUrl: string;
  tenant(scopes?: Scope[]): Promise<Tenant>;
  /** Stops the service and keeps its database, so another service can be started on it. */
  stop(): Promise<void>;
  close(): Promise<void>;
}

export async function startTestService(env: Record<string, string> = {}): Promise<TestService> {
  const database = await createTestDatabase();
  const dataDir = mkdtempSync(path.join(tmpdir(), "codeplane-test-"));
  const encryptionKey = randomBytes(32).toString("base64");
  const config = loadConfig({
    DATABASE_URL: database.url,
    CODEPLANE_ENCRYPTION_KEY: encryptionKey,
    CODEPLANE_DATA_DIR: dataDir,
    PORT: "0",
    CODEPLANE_HOST: "127.0.0.1",
    CODEPLANE_ALLOW_LOCAL_REPOSITORIES: "true",
    CODEPLANE_MIGRATE_ON_START: "false",
    CODEPLANE_LOG_LEVEL: "debug",
    ...env,
  });
  const logs: string[] = [];
  const logger = createRootLogger(config.logLevel, { write: (line: string) => void logs.push(line) });
  const service = await startService(config, logger);
  const url = service.url;
  let n = 0;
  let stopped = false;
  return {
    url,
    service,
    db: database.db,
    logs,
    encryptionKey: env.CODEPLANE_ENCRYPTION_KEY ?? encryptionKey,
    databaseUrl: config.database.url ?? database.url,
    async tenant(scopes) {
      const account = await createAccount(database.db, `acct-${process.pid}-${++n}-${randomUUID().slice(0, 8)}`);
      const { key } = await createApiKey(database.db, account.id, { name: "test", ...(scopes && { scopes }) });
      return {
        accountId: account.id,
        key,
        api: (pathname, init = {}) => {
          const { json, headers, ...rest } = init;
          return fetch(url + pathname, {
            ...rest,
            headers: {
              authorization: `Bearer ${key}`,
              ...(json !== undefined && { "content-type": "application/json" }),
              ...(headers as Record<string, string> | undefined),
            },
            ...(json !== undefined && { body: JSON.stringify(json) }),
          });
        },
      };
    },
    async stop() {
      if (!stopped) await service.close();
      stopped = true;
    },
    async close() {
      if (!stopped) await service.close();
      stopped = true;
      await database.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
