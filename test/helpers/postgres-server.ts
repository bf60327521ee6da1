import { execFile as execFileCb } from "node:child_process";
import { appendFileSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { freePort } from "./free-port.ts";

// A throw-away Postgres server in a temp folder on a free loopback port, for
// the integration tests and the benchmarks. With `listen`, it also listens on
// those addresses (the local cluster's node address, for pods), admitting
// clients from `allow` with a password only (loopback stays trust).

const execFile = promisify(execFileCb);

export interface PostgresServer {
  port: number;
  /** The cluster's data directory (pg_ctl -D). */
  dataDir: string;
  adminUrl: string;
  urlFor(database: string): string;
  stop(): Promise<void>;
}

export interface PostgresOptions {
  /** More addresses to listen on besides 127.0.0.1 (each must be an address of this machine). */
  listen?: string[];
  /** CIDRs admitted on those addresses, with scram-sha-256 (roles need a password). */
  allow?: string[];
}

function bindable(port: number, host: string): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once("error", () => resolve(false));
    srv.listen(port, host, () => srv.close(() => resolve(true)));
  });
}

/** A port free on loopback and on every address in `others`. */
async function freeOnAll(others: string[] = []): Promise<number> {
  for (;;) {
    const port = await freePort();
    if ((await Promise.all(others.map((h) => bindable(port, h)))).every(Boolean)) return port;
  }
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

export async function startPostgres(opts: PostgresOptions = {}): Promise<PostgresServer> {
  const listen = ["127.0.0.1", ...(opts.listen ?? [])];
  const dir = mkdtempSync(path.join(tmpdir(), "codeplane-pg-"));
  const dataDir = path.join(dir, "data");
  // Postgres refuses to run as root; CI runs as root, so run it as an unprivileged user there.
  const asRoot = process.getuid?.() === 0;
  const user = asRoot
    ? await execFile("id", ["-u", "postgres"]).then(
        () => "postgres",
        () => "nobody",
      )
    : null;
  if (user) {
    const uid = Number((await execFile("id", ["-u", user])).stdout.trim());
    const gid = Number((await execFile("id", ["-g", user])).stdout.trim());
    chownSync(dir, uid, gid);
  }
  const run = (cmd: string, args: string[]) => (user ? execFile("runuser", ["-u", user, "--", pgBin(cmd), ...args]) : execFile(pgBin(cmd), args));

  const port = await freeOnAll(opts.listen);
  await run("initdb", ["-D", dataDir, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"]);
  // initdb's pg_hba.conf trusts loopback only; other clients must give a password.
  for (const cidr of opts.allow ?? []) appendFileSync(path.join(dataDir, "pg_hba.conf"), `host all all ${cidr} scram-sha-256\n`);
  await run("pg_ctl", [
    "-D",
    dataDir,
    "-l",
    path.join(dir, "postgres.log"),
    "-w",
    "-t",
    "60",
    "-o",
    `-p ${port} -k ${dir} -c listen_addresses=${listen.join(",")} -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200`,
    "start",
  ]);
  const urlFor = (db: string) => `postgres://postgres@127.0.0.1:${port}/${db}`;
  return {
    port,
    dataDir,
    adminUrl: urlFor("postgres"),
    urlFor,
    async stop() {
      await run("pg_ctl", ["-D", dataDir, "-m", "immediate", "-w", "stop"]).catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
