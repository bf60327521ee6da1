import type { Log } from "@kubernetes/client-node";
import type { LogArchiveRows } from "../domain/workloads/log-archive-rows.ts";
import type { LogLine, MetricFrame } from "@codeplane/frames";
import { followOnce, resumeTime, type FollowTarget } from "../k8s/pod-log.ts";
import type { Logger } from "../logger.ts";

// While a workload is live, its lines are copied into Postgres as they come, so
// they outlive the pod (deleted, evicted, garbage-collected). Each one has at
// most one archiver in the (leader) controller; after a restart it resumes
// from the highest stored seq.

export interface ArchiverDeps {
  /** Where the lines go: one kind of workload's tables. */
  rows: LogArchiveRows;
  log: Log;
  logger: Logger;
  /** Per stream; lines past it are dropped and the stream marked truncated. */
  maxBytesPerStream: number;
  /** Whether the container can still produce output ("gone" ends archiving). */
  containerState(target: FollowTarget): Promise<"waiting" | "running" | "terminated" | "gone">;
  flushIntervalMs?: number;
  onComplete?: (id: string) => void;
}

const FLUSH_LINES = 500;

export interface ArchiveOptions {
  /**
   * The workload may go on in another pod after this one (a run with an attempt left,
   * src/controller/run-retry.ts): when this pod's log ends, the logs are not declared complete;
   * the reconciler does so once the workload has ended.
   */
  holdCompletion?: boolean;
}

export class LogArchiver {
  readonly #deps: ArchiverDeps;
  /** By workload id, then pod: a run's lost attempt may still be read while its next attempt's pod is. */
  readonly #active = new Map<string, Map<string, AbortController>>();

  constructor(deps: ArchiverDeps) {
    this.#deps = deps;
  }

  isArchiving(id: string): boolean {
    return (this.#active.get(id)?.size ?? 0) > 0;
  }

  ensure(id: string, target: FollowTarget, opts: ArchiveOptions = {}): void {
    let pods = this.#active.get(id);
    if (pods?.has(target.pod)) return;
    if (!pods) {
      pods = new Map<string, AbortController>();
      this.#active.set(id, pods);
    }
    const abort = new AbortController();
    pods.set(target.pod, abort);
    this.#run(id, target, abort.signal, opts.holdCompletion ?? false)
      .catch((err: unknown) => this.#deps.logger.error({ err, workload_id: id }, "log archiving failed"))
      .finally(() => {
        const now = this.#active.get(id);
        if (now?.get(target.pod) === abort) now.delete(target.pod);
        if (now?.size === 0) this.#active.delete(id);
      });
  }

  stopAll(): void {
    for (const pods of this.#active.values()) for (const a of pods.values()) a.abort();
    this.#active.clear();
  }

  async #run(id: string, target: FollowTarget, signal: AbortSignal, holdCompletion: boolean): Promise<void> {
    const { logger, rows } = this.#deps;
    const resume = await rows.resume(id);
    if (!resume) return;
    const { bytes } = resume;
    const truncated = { stdout: false, stderr: false };
    let lastSeq = resume.afterSeq;
    logger.debug({ workload_id: id, after_seq: lastSeq, pod: target.pod }, "archiving the workload's output");
    let lastTs: string | undefined;
    let buffer: LogLine[] = [];
    let metrics: MetricFrame[] = [];

    const writeBatch = async () => {
      if (!buffer.length && !metrics.length) return;
      const lines = buffer;
      const batch = { lines, metrics };
      buffer = [];
      metrics = [];
      const kept: LogLine[] = [];
      for (const l of lines) {
        const size = Buffer.byteLength(l.line) + 1;
        if (bytes[l.stream] + size > this.#deps.maxBytesPerStream) truncated[l.stream] = true;
        else {
          bytes[l.stream] += size;
          kept.push(l);
        }
      }
      // The whole batch goes along: a run's metrics count even in lines past the cap.
      await rows.write(id, kept, { ...bytes }, { ...truncated }, batch);
    };
    // Batches are written one after another so byte counters never go backwards.
    let chain: Promise<void> = Promise.resolve();
    const flush = () => (chain = chain.then(writeBatch, writeBatch));
    const timer = setInterval(
      () => void flush().catch((err: unknown) => logger.warn({ err, workload_id: id }, "log flush failed")),
      this.#deps.flushIntervalMs ?? 250,
    );
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
              if (buffer.length >= FLUSH_LINES) void flush().catch((err: unknown) => logger.warn({ err, workload_id: id }, "log flush failed"));
            },
            metric: (m) => {
              metrics.push(m);
              if (metrics.length >= FLUSH_LINES) void flush().catch((err: unknown) => logger.warn({ err, workload_id: id }, "log flush failed"));
            },
            exit: () => undefined,
          },
        });
        lastSeq = result.lastSeq;
        lastTs = result.lastTs ?? lastTs;
        logger.debug({ workload_id: id, last_seq: lastSeq, exited: result.exited }, "pod log follow ended");
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
      if (!holdCompletion) await rows.markComplete(id);
      this.#deps.onComplete?.(id);
    } finally {
      clearInterval(timer);
      if (signal.aborted) await flush().catch(() => undefined);
    }
  }
}
