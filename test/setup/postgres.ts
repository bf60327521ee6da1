import { execFile as execFileCb } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import type { TestProject } from "vitest/node";
import { Kysely, PostgresDialect } from "kysely";
import { migrateToLatest } from "../../src/db/migrate.ts";
import { createRootLogger } from "../../src/logger.ts";

// Starts one throw-away Postgres server for the whole integration run. Test
// files each get their own database, copied from a migrated template, so they
// can run in parallel without seeing each other's rows.

const execFile = promisify(execFileCb);
export const TEMPLATE_DB = "codeplane_template";

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

/** initdb and pg_ctl from PATH, or from Debian's versioned folder, newest first. */
function pgBin(name: string): string {
  const onPath = (process.env.PATH ?? "").split(":").find((d) => d && existsSync(path.join(d, name)));
  if (onPath) return path.join(onPath, name);
  const versions = existsSync("/usr/lib/postgresql") ? readdirSync("/usr/lib/postgresql").sort((a, b) => Number(b) - Number(a)) : [];
  for (const v of versions) {
    const p = path.join("/usr/lib/postgresql", v, "bin", name);
    if (existsSync(p)) return p;
  }
  throw new Error(`${name} not found: install the PostgreSQL server (apt-get install postgresql)`);
}

export default async function setup(project: TestProject) {
  const dir = mkdtempSync(path.join(tmpdir(), "codeplane-pg-"));
  const dataDir = path.join(dir, "data");
  // Postgres refuses to run as root; CI runs as root, so run it as an unprivileged user there.
  const asRoot = process.getuid?.() === 0;
  const user = asRoot ? ((await execFile("id", ["-u", "postgres"]).then(() => "postgres", () => "nobody"))) : null;
  if (user) chownSync(dir, Number((await execFile("id", ["-u", user])).stdout.trim()), Number((await execFile("id", ["-g", user])).stdout.trim()));
  const run = (cmd: string, args: string[]) => (user ? execFile("runuser", ["-u", user, "--", pgBin(cmd), ...args]) : execFile(pgBin(cmd), args));

  const port = await freePort();
  await run("initdb", ["-D", dataDir, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"]);
  await run("pg_ctl", [
    "-D", dataDir, "-l", path.join(dir, "postgres.log"), "-w", "-t", "60",
    "-o", `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200`,
    "start",
  ]);

  const adminUrl = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`create database ${TEMPLATE_DB}`);
  await admin.end();
  const db = new Kysely<any>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: `postgres://postgres@127.0.0.1:${port}/${TEMPLATE_DB}`, max: 1 }) }) });
  await migrateToLatest(db, createRootLogger("silent"));
  await db.destroy();

  project.provide("pgAdminUrl", adminUrl);
  project.provide("pgPort", port);

  return async () => {
    await run("pg_ctl", ["-D", dataDir, "-m", "immediate", "-w", "stop"]).catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  };
}

declare module "vitest" {
  export interface ProvidedContext {
    pgAdminUrl: string;
    pgPort: number;
  }
}
