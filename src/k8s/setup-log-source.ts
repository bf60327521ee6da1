import { Writable } from "node:stream";
import type { Log, V1Pod } from "@kubernetes/client-node";
import type { SetupLogSource } from "../logs/contracts.ts";
import type { Logger } from "../logger.ts";
import type { KubeClients } from "./client.ts";
import { nextPodChange } from "./pod-change.ts";
import { newestPod } from "./pods.ts";

// The API process's live upstream for an environment build's install output
// (the run log stream's `setup` events): find the build's pod, follow its
// `install` container's log (plain text: the install's own output, not the
// runner's framed lines) with the kubelet's timestamps, and follow again after
// a drop, skipping the lines already given, until the install has ended and
// its log has been read to its end. A follow always starts at the log's first
// line, so the lines are numbered alike by every reader, and a resumed follow
// repeats nothing. Waits are bounded: a pod that is not there (yet, or any
// more) is looked for again on its next change or after at most 2 s, until the
// caller stops the follow (the build's row left `building`).

/** The install's container in the build's pod (src/k8s/environment-job.ts). */
const INSTALL = "install";

/** label: the pod label holding the environment's id (codeplane.dev/environment). */
export function kubeSetupLogSource(k: KubeClients, logger: Logger, label: string): SetupLogSource {
  return {
    follow(environmentId, onLine, onEnd) {
      const abort = new AbortController();
      void (async () => {
        /** The pod the lines so far came from, and how many of its lines were given. */
        let podName: string | null = null;
        let taken = 0;
        for (let attempt = 0; !abort.signal.aborted; attempt++) {
          const selector = `${label}=${environmentId}`;
          const pods = await k.core.listNamespacedPod({ namespace: k.namespace, labelSelector: selector }).catch(() => null);
          const pod = pods ? newestPod(pods.items) : null;
          const install = installState(pod);
          if (pod && install !== "waiting") {
            const name = pod.metadata!.name!;
            // A build started again in a new pod: its lines go on after those already given.
            if (name !== podName) [podName, taken] = [name, 0];
            const r = await followInstallLog(k.log, { namespace: k.namespace, pod: name }, taken, abort.signal, (text, ts) => {
              taken++;
              onLine(text, ts);
            });
            // The install had ended before the follow began and its log was read to its end: that is all of it.
            if (install === "terminated" && r.clean && !abort.signal.aborted) {
              onEnd(true);
              return;
            }
            // Still running when it began: the follow ended with the container, or dropped. The pod's next
            // change (the container's end) wakes the wait below, so the next follow reads the log to its end.
          }
          await nextPodChange(
            k.config,
            { namespace: k.namespace, labelSelector: selector, resourceVersion: pods?.metadata?.resourceVersion },
            Math.min(2000, 250 * (attempt + 1)),
            abort.signal,
          );
        }
      })().catch((err: unknown) => {
        logger.warn({ err, environment_id: environmentId }, "setup log follow failed");
        if (!abort.signal.aborted) onEnd(false);
      });
      return () => abort.abort();
    },
  };
}

/** Where the pod's install container is: not started (or no pod), running, or ended. */
export function installState(pod: V1Pod | null): "waiting" | "running" | "terminated" {
  const state = pod?.status?.initContainerStatuses?.find((c) => c.name === INSTALL)?.state;
  if (state?.terminated) return "terminated";
  if (state?.running) return "running";
  return "waiting";
}

/**
 * A line of a log read with `timestamps=true`: the kubelet's RFC 3339 time (nanoseconds), a
 * space, the text. The time is given to the millisecond, as every other line's is. A line
 * without one (it should not happen) keeps its whole text, with the time it was read.
 */
export function splitTimestamp(raw: string, now: () => Date = () => new Date()): { ts: string; text: string } {
  const m = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(\.\d+)?(Z|[+-]\d\d:\d\d) /.exec(raw);
  if (!m) return { ts: now().toISOString(), text: raw };
  const d = new Date(`${m[1]}${(m[2] ?? "").slice(0, 4)}${m[3]}`);
  return { ts: Number.isNaN(d.getTime()) ? now().toISOString() : d.toISOString(), text: raw.slice(m[0].length) };
}

/** Splits a byte stream into lines (UTF-8, "\n"); a last line without its newline is given only at a clean end. */
export class LineSplitter {
  #decoder = new TextDecoder("utf-8");
  #held = "";

  push(chunk: Uint8Array): string[] {
    const text = this.#held + this.#decoder.decode(chunk, { stream: true });
    const parts = text.split("\n");
    this.#held = parts.pop()!;
    return parts;
  }

  end(): string[] {
    const rest = this.#held + this.#decoder.decode();
    this.#held = "";
    return rest === "" ? [] : [rest];
  }
}

/**
 * One follow of the install container's log from its first line, giving the lines after the
 * first `skip`. Resolves when the log stream ends; `clean` when it ended as a response does (at
 * the log's end: the container stopped), not by an error or the abort.
 */
export async function followInstallLog(
  log: Log,
  target: { namespace: string; pod: string },
  skip: number,
  signal: AbortSignal,
  onLine: (text: string, ts: string) => void,
): Promise<{ clean: boolean }> {
  const splitter = new LineSplitter();
  let seen = 0;
  const give = (raws: string[]) => {
    for (const raw of raws) {
      if (++seen <= skip || signal.aborted) continue;
      const { ts, text } = splitTimestamp(raw);
      onLine(text, ts);
    }
  };
  return new Promise<{ clean: boolean }>((resolve) => {
    let settled = false;
    const done = (clean: boolean) => {
      if (settled) return;
      settled = true;
      if (clean) give(splitter.end());
      resolve({ clean: clean && !signal.aborted });
    };
    const sink = new Writable({
      write(chunk: Buffer, _enc, cb) {
        give(splitter.push(chunk));
        cb();
      },
      final(cb) {
        done(true);
        cb();
      },
    });
    sink.on("close", () => done(false));
    sink.on("error", () => done(false));
    // The client pipes the response into the sink without listening for its errors (see pod-log.ts).
    sink.on("pipe", (source) => source.on("error", () => done(false)));
    if (signal.aborted) return done(false);
    signal.addEventListener("abort", () => done(false), { once: true });
    log.log(target.namespace, target.pod, INSTALL, sink, { follow: true, timestamps: true }).then(
      (controller) => {
        if (signal.aborted) controller.abort();
        signal.addEventListener("abort", () => controller.abort(), { once: true });
      },
      () => done(false),
    );
  });
}
