import type { Log } from "@kubernetes/client-node";
import { sql } from "kysely";
import type { Db } from "../db/database.ts";
import { untyped, type WorkloadTable } from "../db/workload-tables.ts";
import type { LogLine } from "../logs/frames.ts";
import { followOnce, resumeTime, type FollowTarget } from "../k8s/pod-log.ts";
import type { Logger } from "../logger.ts";

// While a run is live, its lines are copied into Postgres as they come, so
// they outlive the pod (deleted, evicted, garbage-collected). Each run has at
// most one archiver in the (leader) controller; after a restart it resumes
// from the highest stored seq.

export interface ArchiverDeps {
  db: Db;
  /** Whose logs: runs or analyses. */
  owner: WorkloadTable;
  log: Log;
  logger: Logger;
  /** Per stream; lines past it are dropped and the stream marked truncated. */
  maxBytesPerStream: number;
  /** Whether the container can still produce output ("gone" ends archiving). */
  containerState(target: FollowTarget): Promise<"waiting" | "running" | "terminated" | "gone">;
  flushIntervalMs?: number;
  onComplete?: (runId: string) => void;
}

const FLUSH_LINES = 500;

export class LogArchiver {
  readonly #deps: ArchiverDeps;
  readonly #active = new Map<string, AbortController>();

  constructor(deps: ArchiverDeps) {
    this.#deps = deps;
  }

  isArchiving(runId: string): boolean {
    return this.#active.has(runId);
  }

  ensure(runId: string, target: FollowTarget): void {
    if (this.#active.has(runId)) return;
    const abort = new AbortController();
    this.#active.set(runId, abort);
    this.#run(runId, target, abort.signal)
      .catch((err: unknown) => this.#deps.logger.error({ err, run_id: runId }, "log archiving failed"))
      .finally(() => {
        if (this.#active.get(runId) === abort) this.#active.delete(runId);
      });
  }

  stopAll(): void {
    for (const a of this.#active.values()) a.abort();
    this.#active.clear();
  }

  async #run(runId: string, target: FollowTarget, signal: AbortSignal): Promise<void> {
    const { logger, owner } = this.#deps;
    const db = untyped(this.#deps.db);
    const max = await db.selectFrom(owner.linesTable).select(sql<string | null>`max(seq)`.as("seq")).where(owner.key, "=", runId).executeTakeFirst();
    const row = await db.selectFrom(owner.table).select(["stdout_bytes", "stderr_bytes", "logs_complete"]).where("id", "=", runId).executeTakeFirst();
    if (!row || row.logs_complete) return;
    const bytes = { stdout: Number(row.stdout_bytes), stderr: Number(row.stderr_bytes) };
    const truncated = { stdout: false, stderr: false };
    let lastSeq = Number(max?.seq ?? 0);
    logger.debug({ [owner.key]: runId, after_seq: lastSeq, pod: target.pod }, "archiving the run's output");
    let lastTs: string | undefined;
    let buffer: LogLine[] = [];

    const writeBatch = async () => {
      if (!buffer.length) return;
      const lines = buffer;
      buffer = [];
      const kept: LogLine[] = [];
      for (const l of lines) {
        const size = Buffer.byteLength(l.line) + 1;
        if (bytes[l.stream] + size > this.#deps.maxBytesPerStream) truncated[l.stream] = true;
        else {
          bytes[l.stream] += size;
          kept.push(l);
        }
      }
      await db.transaction().execute(async (tx) => {
        if (kept.length) {
          await tx
            .insertInto(owner.linesTable)
            .values(kept.map((l) => ({ [owner.key]: runId, seq: l.seq, stream: l.stream, ts: new Date(l.ts), line: l.line })))
            .onConflict((oc) => oc.columns([owner.key, "seq"]).doNothing())
            .execute();
        }
        await tx
          .updateTable(owner.table)
          .set({
            stdout_bytes: bytes.stdout,
            stderr_bytes: bytes.stderr,
            ...(truncated.stdout && { stdout_truncated: true }),
            ...(truncated.stderr && { stderr_truncated: true }),
          })
          .where("id", "=", runId)
          .execute();
      });
    };
    // Batches are written one after another so byte counters never go backwards.
    let chain: Promise<void> = Promise.resolve();
    const flush = () => (chain = chain.then(writeBatch, writeBatch));
    const timer = setInterval(() => void flush().catch((err: unknown) => logger.warn({ err, run_id: runId }, "log flush failed")), this.#deps.flushIntervalMs ?? 250);
    try {
      for (let attempt = 0; !signal.aborted; attempt++) {
        const result = await followOnce(this.#deps.log, target, {
          afterSeq: lastSeq,
          sinceTime: resumeTime(lastTs),
          signal,
          logger,
          handlers: {
            line: (l) => {
              buffer.push(l);
              if (buffer.length >= FLUSH_LINES) void flush().catch((err: unknown) => logger.warn({ err, run_id: runId }, "log flush failed"));
            },
            exit: () => undefined,
          },
        });
        lastSeq = result.lastSeq;
        lastTs = result.lastTs ?? lastTs;
        logger.debug({ run_id: runId, last_seq: lastSeq, exited: result.exited }, "pod log follow ended");
        if (signal.aborted) return;
        if (result.exited) break;
        const state = await this.#deps.containerState(target).catch(() => "running" as const);
        if (state === "gone") break;
        if (state === "terminated") {
          // One more read without follow semantics' races: the log of a
          // finished container is complete, so a final follow returns it all.
          if (attempt > 0) break;
          continue;
        }
        await new Promise((r) => setTimeout(r, Math.min(5000, 250 * 2 ** Math.min(attempt, 4))));
      }
      await flush();
      await db.updateTable(owner.table).set({ logs_complete: true }).where("id", "=", runId).execute();
      this.#deps.onComplete?.(runId);
    } finally {
      clearInterval(timer);
      if (signal.aborted) await flush().catch(() => undefined);
    }
  }
}
