import type { LiveLogSource } from "../logs/contracts.ts";
import type { Logger } from "../logger.ts";
import type { KubeClients } from "./client.ts";
import { nextPodChange } from "./pod-change.ts";
import { followOnce, podLogNumbering, resumeTime } from "./pod-log.ts";
import { newestPod } from "./pods.ts";

// The API process's live upstream for a workload (a run or an analysis): find
// the workload's pod, follow its main container's framed log, and follow again
// after a drop (API server or kubelet restart) from where it stopped, until the
// command exits or the pod is gone.

/** label: the pod label holding the id (codeplane.dev/run or codeplane.dev/analysis). */
export function kubeLiveLogSource(k: KubeClients, logger: Logger, label: string): LiveLogSource {
  return {
    follow(id, afterSeq, onLine, onEnd) {
      const abort = new AbortController();
      void (async () => {
        let lastSeq = afterSeq;
        let lastTs: string | undefined;
        for (let attempt = 0; !abort.signal.aborted; attempt++) {
          const pods = await k.core.listNamespacedPod({ namespace: k.namespace, labelSelector: `${label}=${id}` }).catch(() => null);
          const pod = pods ? newestPod(pods.items) : null;
          const main = pod?.status?.containerStatuses?.find((c) => c.name === "main")?.state;
          if (pods && !pod && attempt > 0 && lastSeq > afterSeq) break; // the pod is gone after having run
          if (pod && (main?.running || main?.terminated)) {
            const r = await followOnce(
              k.log,
              // A run's later attempt numbers its lines from its own offset (src/controller/run-retry.ts).
              { namespace: k.namespace, pod: pod.metadata!.name!, container: "main", ...podLogNumbering(pod) },
              {
                afterSeq: lastSeq,
                sinceTime: resumeTime(lastTs),
                signal: abort.signal,
                logger,
                handlers: {
                  line: (l) => {
                    lastSeq = l.seq;
                    lastTs = l.ts;
                    onLine(l);
                  },
                  exit: () => undefined,
                },
              },
            );
            if (r.exited || (main.terminated && attempt > 0)) break;
          }
          // Not started yet, or the follow dropped: look again when the pod changes (created,
          // scheduled, its containers started), and at the latest after a growing pause.
          await nextPodChange(
            k.config,
            { namespace: k.namespace, labelSelector: `${label}=${id}`, resourceVersion: pods?.metadata?.resourceVersion },
            Math.min(2000, 250 * (attempt + 1)),
            abort.signal,
          );
        }
        if (!abort.signal.aborted) onEnd();
      })().catch((err: unknown) => {
        logger.warn({ err, stream_id: id }, "live log follow failed");
        if (!abort.signal.aborted) onEnd();
      });
      return () => abort.abort();
    },
  };
}
