import { execFile as execFileCb } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";

// A throw-away Postgres server in a temp folder on a free loopback port, for
// the integration tests and the benchmarks.

const execFile = promisify(execFileCb);

export interface PostgresServer {
  port: number;
  adminUrl: string;
  urlFor(database: string): string;
  stop(): Promise<void>;
}

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

export async function startPostgres(): Promise<PostgresServer> {
  const dir = mkdtempSync(path.join(tmpdir(), "codeplane-pg-"));
  const dataDir = path.join(dir, "data");
  // Postgres refuses to run as root; CI runs as root, so run it as an unprivileged user there.
  const asRoot = process.getuid?.() === 0;
  const user = asRoot ? await execFile("id", ["-u", "postgres"]).then(() => "postgres", () => "nobody") : null;
  if (user) {
    const uid = Number((await execFile("id", ["-u", user])).stdout.trim());
    const gid = Number((await execFile("id", ["-g", user])).stdout.trim());
    chownSync(dir, uid, gid);
  }
  const run = (cmd: string, args: string[]) =>
    user ? execFile("runuser", ["-u", user, "--", pgBin(cmd), ...args]) : execFile(pgBin(cmd), args);

  const port = await freePort();
  await run("initdb", ["-D", dataDir, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"]);
  await run("pg_ctl", [
    "-D", dataDir, "-l", path.join(dir, "postgres.log"), "-w", "-t", "60",
    "-o", `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200`,
    "start",
  ]);
  const urlFor = (db: string) => `postgres://postgres@127.0.0.1:${port}/${db}`;
  return {
    port,
    adminUrl: urlFor("postgres"),
    urlFor,
    async stop() {
      await run("pg_ctl", ["-D", dataDir, "-m", "immediate", "-w", "stop"]).catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
