import { closeSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";

// The embedded database is a folder that one process at a time may open; two
// would corrupt it. A pid file makes a second process fail with a clear
// message instead (a stale file from a crashed process is taken over).

/** Another live process holds the embedded database: a refusal to explain, not a crash. */
export class DatabaseInUseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "DatabaseInUseError";
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

export function lockEmbeddedDatabase(lockFile: string): () => void {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(lockFile, "wx", 0o600);
      writeFileSync(fd, String(process.pid));
      closeSync(fd);
      return () => rmSync(lockFile, { force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      const holder = Number(readFileSync(lockFile, "utf8").trim());
      if (Number.isInteger(holder) && holder > 0 && holder !== process.pid && alive(holder)) {
        throw new DatabaseInUseError(`the embedded database is in use by process ${holder}; stop it first, or set DATABASE_URL to use a Postgres server`);
      }
      rmSync(lockFile, { force: true });
    }
  }
  throw new Error(`could not lock the embedded database (${lockFile})`);
}
