import { Writable } from "node:stream";
import type { Log } from "@kubernetes/client-node";
import { FrameSplitter, type ExitFrame, type Frame, type LogLine, type MetricFrame, type ResultPiece } from "@codeplane/frames";
import type { V1Pod } from "@kubernetes/client-node";
import type { Logger } from "../logger.ts";
import { ATTEMPT_SEQ_STRIDE, LOG_SEQ_OFFSET_ANNOTATION } from "../resources/run.ts";

// Follows a run container's framed log through the Kubernetes log API. A
// follow can end early (API server restart, kubelet hiccup, idle timeouts);
// the caller reconnects with the last line seen, and lines the new follow
// repeats are dropped here by seq, so consumers see each line exactly once.

/** A line split into frames is joined; beyond this it is cut, so one runaway line can't exhaust memory. */
export const MAX_JOINED_LINE = 1024 * 1024;

export interface FollowHandlers {
  line(l: LogLine): void;
  exit(e: ExitFrame): void;
  /** Pieces of a result document (analyses); not lines, so they never reach line(). */
  result?(r: ResultPiece): void;
  /** Records of the run's metrics file the runner forwarded (runs); not lines either. Each once, in seq order. */
  metric?(m: MetricFrame): void;
}

export interface FollowTarget {
  namespace: string;
  pod: string;
  container: string;
  /**
   * Added to the seq of every frame the pod writes (a run's later attempt: its lines keep a range
   * of the run's log of their own, src/controller/run-retry.ts); absent: 0.
   */
  seqOffset?: number | undefined;
  /** Frames whose own seq reaches this are dropped (they would run into the next attempt's range); absent: none. */
  seqLimit?: number | undefined;
}

/** How the pod's frames are numbered in its workload's log: from its attempt's annotation (runs with retries); {} for any other pod. */
export function podLogNumbering(pod: V1Pod | null | undefined): Pick<FollowTarget, "seqOffset" | "seqLimit"> {
  const raw = pod?.metadata?.annotations?.[LOG_SEQ_OFFSET_ANNOTATION];
  if (raw === undefined || !/^[0-9]{1,16}$/.test(raw)) return {};
  const offset = Number(raw);
  return Number.isSafeInteger(offset) ? { seqOffset: offset, seqLimit: ATTEMPT_SEQ_STRIDE } : {};
}

/**
 * One follow of the pod log, from `sinceTime` when given. Resolves when the
 * log stream ends (for whatever reason); `abort()` ends it early.
 */
export async function followOnce(
  log: Log,
  target: FollowTarget,
  opts: { afterSeq: number; sinceTime?: string | undefined; handlers: FollowHandlers; logger: Logger; signal?: AbortSignal },
): Promise<{ lastSeq: number; lastTs: string | undefined; exited: boolean }> {
  const splitter = new FrameSplitter();
  let lastSeq = opts.afterSeq;
  let lastTs: string | undefined;
  let exited = false;
  // Pieces of a long line, per stream, until its last piece arrives. The
  // joined line takes the last piece's seq, so every reader numbers it alike.
  const pieces: Record<"stdout" | "stderr", { ts: string; text: string } | null> = { stdout: null, stderr: null };
  const offset = target.seqOffset ?? 0;
  const limit = target.seqLimit ?? Infinity;
  /** The frame's seq in the workload's log; null when it is past the pod's range. */
  const renumber = (seq: number): number | null => (seq >= limit ? null : seq + offset);
  const handle = (frames: ReturnType<FrameSplitter["push"]>) => {
    for (const raw of frames) {
      const f = offset === 0 && limit === Infinity ? raw : renumbered(raw, renumber);
      if (!f) continue;
      if (f.kind === "line") {
        if (f.line.seq <= lastSeq) continue;
        const held = pieces[f.line.stream];
        if (f.line.partial) {
          const text = (held?.text ?? "") + f.line.line;
          pieces[f.line.stream] = { ts: held?.ts ?? f.line.ts, text: text.length > MAX_JOINED_LINE ? text.slice(0, MAX_JOINED_LINE) : text };
          continue;
        }
        pieces[f.line.stream] = null;
        const joined = held ? (held.text + f.line.line).slice(0, MAX_JOINED_LINE) : f.line.line;
        // Postgres text cannot hold NUL; every reader replaces it the same way.
        const line = { seq: f.line.seq, stream: f.line.stream, ts: held?.ts ?? f.line.ts, line: joined.replaceAll("\u0000", "\uFFFD") };
        lastSeq = f.line.seq;
        lastTs = f.line.ts;
        opts.handlers.line(line);
      } else if (f.kind === "result") {
        opts.handlers.result?.(f.result);
      } else if (f.kind === "metric") {
        if (f.metric.seq <= lastSeq) continue;
        lastSeq = f.metric.seq;
        lastTs = f.metric.ts;
        opts.handlers.metric?.(f.metric);
      } else if (f.kind === "exit") {
        if (f.exit.seq <= lastSeq && exited) continue;
        lastSeq = Math.max(lastSeq, f.exit.seq);
        exited = true;
        opts.handlers.exit(f.exit);
      }
    }
  };
  await new Promise<void>((resolve) => {
    let settled = false;
    const done = () => {
      if (settled) return;
      settled = true;
      handle(splitter.end());
      resolve();
    };
    const sink = new Writable({
      write(chunk: Buffer, _enc, cb) {
        handle(splitter.push(chunk));
        cb();
      },
      final(cb) {
        done();
        cb();
      },
    });
    sink.on("close", done);
    sink.on("error", done);
    // The client pipes the response body into the sink without listening for
    // its errors; an aborted or broken follow (API server restart, our own
    // abort) would otherwise be an uncaught 'error' that ends the process.
    sink.on("pipe", (source) => source.on("error", done));
    log
      .log(target.namespace, target.pod, target.container, sink, {
        follow: true,
        ...(opts.sinceTime && { sinceTime: opts.sinceTime }),
      })
      .then(
        (controller) => {
          if (opts.signal?.aborted) controller.abort();
          opts.signal?.addEventListener("abort", () => controller.abort(), { once: true });
        },
        (err: unknown) => {
          opts.logger.debug({ err: err instanceof Error ? err.message : String(err), pod: target.pod }, "pod log follow failed");
          done();
        },
      );
    opts.signal?.addEventListener("abort", done, { once: true });
  });
  return { lastSeq, lastTs, exited };
}

/** The frame with its seq moved into the workload's log; null when it is past the pod's range. */
function renumbered(f: Frame, renumber: (seq: number) => number | null): Frame | null {
  if (f.kind === "foreign") return f;
  const seq = renumber(f.kind === "line" ? f.line.seq : f.kind === "exit" ? f.exit.seq : f.kind === "result" ? f.result.seq : f.metric.seq);
  if (seq === null) return null;
  switch (f.kind) {
    case "line":
      return { kind: "line", line: { ...f.line, seq } };
    case "exit":
      return { kind: "exit", exit: { ...f.exit, seq } };
    case "result":
      return { kind: "result", result: { ...f.result, seq } };
    case "metric":
      return { kind: "metric", metric: { ...f.metric, seq } };
  }
}

/** Kubelet's sinceTime has one-second resolution; back off a little and let seq drop the repeats. */
export function resumeTime(lastTs: string | undefined): string | undefined {
  if (!lastTs) return undefined;
  const t = new Date(lastTs).getTime() - 2000;
  return new Date(Math.max(0, t)).toISOString().replace(/\.\d{3}Z$/, "Z");
}
