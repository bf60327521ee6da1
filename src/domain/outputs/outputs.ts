import { repeatEvery } from "../shared/periodic.ts";
import { createHash } from "node:crypto";
import { PassThrough, type Readable } from "node:stream";
import { sql } from "kysely";
import type { Db } from "../../db/database.ts";
import type { Logger } from "../../logger.ts";
import { InvalidRangeError, ObjectTooLargeError, type ByteRange, type ObjectStore } from "../../storage/object-store.ts";
import { DomainError, DomainValidationError, notFound } from "../errors.ts";
import { contentTypeOf, outputPathProblem } from "./output-paths.ts";
import { outputGrantFor } from "./output-tokens.ts";
import { tarStream, type TarEntry } from "./tar-writer.ts";

// Run outputs (issue 31): the files a run writes to $CODEPLANE_OUTPUT_DIR,
// which its pod's runner sends here one by one over the internal endpoint
// when the command ends (packages/runner/src/outputs.ts), with the run's
// output token. Each is streamed to the object store through a byte counter
// whose cap is what the limits leave (per file, per run, per account), so an
// upload over a cap is cut as its bytes arrive, stores nothing and lists
// nothing; it is recorded as refused with the reason, which the runner prints
// to the run's stderr. A row is written only after its object is stored
// whole. The sweeper removes the objects and rows of runs that are gone
// (deleted by any path) and of outputs older than the retention.

export interface OutputLimits {
  /** Largest single file (CODEPLANE_OUTPUT_MAX_FILE_BYTES). */
  maxFileBytes: number;
  /** All of one run's files together (CODEPLANE_OUTPUT_MAX_RUN_BYTES). */
  maxRunBytes: number;
  /** Files one run may store (CODEPLANE_OUTPUT_MAX_RUN_FILES). */
  maxRunFiles: number;
  /** All stored outputs of one account's runs (CODEPLANE_OUTPUT_MAX_ACCOUNT_BYTES). */
  maxAccountBytes: number;
  /** Files one account may keep stored (CODEPLANE_OUTPUT_MAX_ACCOUNT_FILES). */
  maxAccountFiles: number;
  /** Outputs older than this are deleted; 0: kept as long as their run (CODEPLANE_OUTPUT_RETENTION_DAYS). */
  retentionDays: number;
}

export interface OutputServiceDeps {
  store: ObjectStore;
  limits: OutputLimits;
  logger: Logger;
}

export interface RunOutput {
  path: string;
  size: number;
  sha256: string;
  content_type: string;
}

export interface RefusedOutput {
  path: string;
  size: number | null;
  reason: string;
}

/** One object per (run, path): the path's hash, so no key is another's folder and any path fits the store's key form. */
export const outputObjectKey = (runId: string, path: string) => `outputs/${runId}/${createHash("sha256").update(path).digest("hex")}`;

/** Reads body to its end, dropping the bytes (a refused upload). */
function drain(body: Readable): Promise<void> {
  if (body.readableEnded || body.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    body.once("end", resolve);
    body.once("close", resolve);
    body.once("error", () => resolve());
    body.resume();
  });
}

/** The account's run, unless it is gone or being deleted (read here, not through runs/, which depends on this feature). */
async function runExists(db: Db, accountId: string, runId: string): Promise<boolean> {
  const row = await db
    .selectFrom("runs")
    .select("id")
    .where("id", "=", runId)
    .where("account_id", "=", accountId)
    .where("deleted_at", "is", null)
    .executeTakeFirst();
  return row !== undefined;
}

export const OUTPUT_SWEEP_INTERVAL_MS = 5 * 60_000;
const SWEEP_BATCH = 200;

const mib = (n: number) => (n >= 1024 * 1024 ? `${(n / 1048576).toFixed(1)} MiB` : `${n} bytes`);

export class OutputService {
  readonly #d: OutputServiceDeps;

  constructor(deps: OutputServiceDeps) {
    this.#d = deps;
  }

  get limits(): OutputLimits {
    return this.#d.limits;
  }

  /**
   * One file from a run's pod. null: the token does not open this run (401).
   * Over a limit: recorded as refused and a payload_too_large DomainError whose message says which limit.
   * declaredSize (the runner's stat) lets a file that cannot fit be refused before any byte is read.
   */
  async receive(db: Db, runId: string, token: string, path: string, body: Readable, declaredSize: number | null): Promise<RunOutput | null> {
    const grant = await outputGrantFor(db, token, runId);
    if (!grant) return null;
    const problem = outputPathProblem(path);
    if (problem) throw new DomainValidationError([{ loc: ["path", "path"], msg: `Value error, the output path ${problem}`, type: "value_error" }]);
    const run = await db
      .selectFrom("runs")
      .select(["id"])
      .where("id", "=", runId)
      .where("account_id", "=", grant.accountId)
      .where("deleted_at", "is", null)
      .executeTakeFirst();
    if (!run) throw notFound("Run");
    const { accountId } = grant;
    const limits = this.#d.limits;
    const usage = await this.#usage(db, accountId, runId, path);
    const room = Math.min(limits.maxFileBytes, limits.maxRunBytes - usage.runBytes, limits.maxAccountBytes - usage.accountBytes);
    const which = (max: number): string =>
      max === limits.maxFileBytes
        ? `the largest output file is ${mib(limits.maxFileBytes)} (CODEPLANE_OUTPUT_MAX_FILE_BYTES)`
        : max === limits.maxRunBytes - usage.runBytes
          ? `a run's outputs are limited to ${mib(limits.maxRunBytes)} together (CODEPLANE_OUTPUT_MAX_RUN_BYTES) and ${mib(usage.runBytes)} are stored`
          : `the account's stored outputs are limited to ${mib(limits.maxAccountBytes)} (CODEPLANE_OUTPUT_MAX_ACCOUNT_BYTES) and ${mib(usage.accountBytes)} are stored`;
    const refuse = async (reason: string, size: number | null): Promise<never> => {
      // Read to its end and dropped, so the sender gets the answer rather than a reset connection.
      await drain(body);
      await this.#recordRefusal(db, runId, accountId, path, size, reason);
      this.#d.logger.info({ run: runId, account: accountId, path, size, reason }, "run output refused");
      throw new DomainError("payload_too_large", `Output ${JSON.stringify(path)} was not stored: ${reason}`);
    };
    if (usage.runFiles >= limits.maxRunFiles)
      await refuse(`a run may store at most ${limits.maxRunFiles} files (CODEPLANE_OUTPUT_MAX_RUN_FILES)`, declaredSize);
    if (usage.accountFiles >= limits.maxAccountFiles)
      await refuse(`the account may keep at most ${limits.maxAccountFiles} output files (CODEPLANE_OUTPUT_MAX_ACCOUNT_FILES)`, declaredSize);
    if (room < 0 || (declaredSize !== null && declaredSize > room)) await refuse(`${mib(declaredSize ?? 0)} is too large: ${which(room)}`, declaredSize);
    const key = outputObjectKey(runId, path);
    const contentType = contentTypeOf(path);
    let stored;
    // The store reads a pipe from the body, not the body: a put cut for size destroys what it reads,
    // and the request must stay open to be drained and answered.
    const pass = new PassThrough();
    body.pipe(pass);
    try {
      stored = await this.#d.store.put(key, pass, { maxBytes: Math.max(room, 0), contentType });
    } catch (err) {
      body.unpipe(pass);
      if (err instanceof ObjectTooLargeError) return refuse(`more than ${mib(room)} arrived: ${which(room)}`, null);
      throw err;
    }
    await db
      .insertInto("run_outputs")
      .values({
        run_id: runId,
        account_id: accountId,
        path,
        object_key: key,
        size: stored.size,
        sha256: stored.sha256,
        content_type: contentType,
        refused: null,
      })
      .onConflict((oc) =>
        oc
          .columns(["run_id", "path"])
          .doUpdateSet({ object_key: key, size: stored.size, sha256: stored.sha256, content_type: contentType, refused: null, stored_at: sql`now()` } as never),
      )
      .execute();
    this.#d.logger.info({ run: runId, account: accountId, path, bytes: stored.size }, "run output stored");
    return { path, size: stored.size, sha256: stored.sha256, content_type: contentType };
  }

  async #usage(db: Db, accountId: string, runId: string, except: string) {
    // The file being replaced (an upload tried again) does not count against itself.
    const sums = await db
      .selectFrom("run_outputs")
      .select([
        sql<string>`coalesce(sum(size), 0)`.as("account_bytes"),
        sql<string>`count(*)`.as("account_files"),
        sql<string>`coalesce(sum(size) filter (where run_id = ${runId}), 0)`.as("run_bytes"),
        sql<string>`count(*) filter (where run_id = ${runId})`.as("run_files"),
      ])
      .where("account_id", "=", accountId)
      .where("refused", "is", null)
      .where((eb) => eb.not(eb.and([eb("run_id", "=", runId), eb("path", "=", except)])))
      .executeTakeFirstOrThrow();
    return {
      accountBytes: Number(sums.account_bytes),
      accountFiles: Number(sums.account_files),
      runBytes: Number(sums.run_bytes),
      runFiles: Number(sums.run_files),
    };
  }

  async #recordRefusal(db: Db, runId: string, accountId: string, path: string, size: number | null, reason: string): Promise<void> {
    // A file stored before under this path stays as it was: the refused upload replaced nothing.
    await db
      .insertInto("run_outputs")
      .values({ run_id: runId, account_id: accountId, path, object_key: null, size: size ?? 0, sha256: null, content_type: null, refused: reason })
      .onConflict((oc) => oc.columns(["run_id", "path"]).doNothing())
      .execute();
  }

  /** The run's stored outputs in path order, and the files refused with why. */
  async list(db: Db, accountId: string, runId: string): Promise<{ items: RunOutput[]; refused: RefusedOutput[] }> {
    if (!(await runExists(db, accountId, runId))) throw notFound("Run");
    const rows = await db.selectFrom("run_outputs").selectAll().where("run_id", "=", runId).where("account_id", "=", accountId).orderBy("path").execute();
    const items: RunOutput[] = [];
    const refused: RefusedOutput[] = [];
    for (const r of rows) {
      if (r.refused !== null) refused.push({ path: r.path, size: Number(r.size) || null, reason: r.refused });
      else items.push({ path: r.path, size: Number(r.size), sha256: r.sha256!, content_type: r.content_type! });
    }
    return { items, refused };
  }

  /** One output's bytes (a range of them), or not found. InvalidRangeError (416) for a range past its end. */
  async open(db: Db, accountId: string, runId: string, path: string, range?: ByteRange) {
    if (!(await runExists(db, accountId, runId))) throw notFound("Run");
    const row = await db
      .selectFrom("run_outputs")
      .selectAll()
      .where("run_id", "=", runId)
      .where("account_id", "=", accountId)
      .where("path", "=", path)
      .where("refused", "is", null)
      .executeTakeFirst();
    if (!row?.object_key) throw notFound("Output");
    const output: RunOutput = { path: row.path, size: Number(row.size), sha256: row.sha256!, content_type: row.content_type! };
    const object = await this.#d.store.get(row.object_key, range);
    if (!object) {
      this.#d.logger.warn({ run: runId, path }, "a stored output's object is missing from the object store");
      throw notFound("Output");
    }
    return { output, object };
  }

  /** Every stored output of the run as one tar stream (gzip it), each object opened only when the archive reaches it. */
  async archive(db: Db, accountId: string, runId: string): Promise<Readable> {
    const { items } = await this.list(db, accountId, runId);
    const rows = await db.selectFrom("run_outputs").select(["path", "stored_at"]).where("run_id", "=", runId).where("refused", "is", null).execute();
    const times = new Map(rows.map((r) => [r.path, r.stored_at]));
    const store = this.#d.store;
    const entries: TarEntry[] = items.map((o) => ({
      path: o.path,
      size: o.size,
      mtime: times.get(o.path) ?? new Date(),
      async open() {
        const object = await store.get(outputObjectKey(runId, o.path));
        if (!object) throw new Error(`output ${o.path} is missing from the object store`);
        return object.body as AsyncIterable<Buffer>;
      },
    }));
    return tarStream(entries);
  }

  /** Removes a run's outputs (objects, then rows) at once: its deletion. The sweeper does the same for runs gone by other paths. */
  async deleteForRun(db: Db, runId: string): Promise<number> {
    const rows = await db.selectFrom("run_outputs").select(["path", "object_key"]).where("run_id", "=", runId).execute();
    await this.#deleteRows(
      db,
      rows.map((r) => ({ run_id: runId, ...r })),
    );
    await db.deleteFrom("output_tokens").where("run_id", "=", runId).execute();
    return rows.length;
  }

  async #deleteRows(db: Db, rows: { run_id: string; path: string; object_key: string | null }[]): Promise<void> {
    for (const r of rows) {
      if (r.object_key) await this.#d.store.delete(r.object_key);
      await db.deleteFrom("run_outputs").where("run_id", "=", r.run_id).where("path", "=", r.path).execute();
    }
  }

  /** One pass: the outputs of runs that are gone or being deleted, and those past the retention. Returns how many went. */
  async sweep(db: Db, now = new Date()): Promise<number> {
    let removed = 0;
    for (;;) {
      let q = db
        .selectFrom("run_outputs as o")
        .select(["o.run_id", "o.path", "o.object_key"])
        .where((eb) =>
          eb.or([
            eb.not(
              eb.exists(
                eb
                  .selectFrom("runs as r")
                  .select(sql`1`.as("one"))
                  .where("r.id", "=", eb.ref("o.run_id"))
                  .where("r.deleted_at", "is", null),
              ),
            ),
            ...(this.#d.limits.retentionDays > 0 ? [eb("o.stored_at", "<", new Date(now.getTime() - this.#d.limits.retentionDays * 86_400_000))] : []),
          ]),
        )
        .limit(SWEEP_BATCH);
      q = q.orderBy("o.run_id").orderBy("o.path");
      const rows = await q.execute();
      if (rows.length === 0) break;
      await this.#deleteRows(db, rows);
      removed += rows.length;
      if (rows.length < SWEEP_BATCH) break;
    }
    await db.deleteFrom("output_tokens").where("expires_at", "<=", now).execute();
    return removed;
  }

  startSweeping(db: Db, intervalMs = OUTPUT_SWEEP_INTERVAL_MS): { stop(): Promise<void> } {
    return repeatEvery(intervalMs, () =>
      this.sweep(db).then(
        (n) => void (n > 0 && this.#d.logger.info({ removed: n }, "removed the outputs of deleted runs and past the retention")),
        (err: unknown) => this.#d.logger.warn({ err }, "sweeping run outputs failed; trying again at the next pass"),
      ),
    );
  }
}

export { InvalidRangeError };
