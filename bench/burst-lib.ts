import * as k8s from "@kubernetes/client-node";
import type { ClusterBench } from "./lib.ts";

// What bench/burst.ts and bench/burst-scenario.ts share: requests as a
// tenant, the GET /v1/runs probe and the order check.

export interface Tenant {
  name: string;
  key: string;
  repositoryId: string;
  runs: number;
}

/** One run of a burst as far as the order check goes. */
export interface Ordered {
  account: string;
  /** Its place in its account's submission order. */
  index: number;
  runId?: string;
}

/** Sends one request as a tenant; throws on anything but 2xx. */
export async function call(bench: ClusterBench, key: string, path: string, json?: unknown): Promise<any> {
  const res = await fetch(bench.service.url + path, {
    method: json === undefined ? "GET" : "POST",
    headers: { authorization: `Bearer ${key}`, ...(json !== undefined && { "content-type": "application/json" }) },
    ...(json !== undefined && { body: JSON.stringify(json) }),
  });
  if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return res.json();
}

/** GET /v1/runs back to back as one account until stopped; the latencies in ms. */
export function probeList(bench: ClusterBench, key: string): { stop(): Promise<number[]> } {
  const latencies: number[] = [];
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const t0 = performance.now();
      await call(bench, key, "/v1/runs?limit=20");
      latencies.push(performance.now() - t0);
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      return latencies;
    },
  };
}

/**
 * An account's runs admitted out of submission order: neighbours whose
 * Admitted condition (the limiter's decision, on the Run resource; whole
 * seconds, so only strict inversions count) is earlier for the later run. The
 * timeline's `admitted` is the Job's start, which the Job controller may take
 * in any order for Jobs made in one decision.
 */
export async function inversions(bench: ClusterBench, samples: readonly Ordered[], account: string): Promise<number> {
  const decided = await admittedAt(bench);
  const runs = samples.filter((x) => x.account === account).sort((a, b) => a.index - b.index);
  let n = 0;
  for (let i = 1; i < runs.length; i++) if (decided.get(runs[i]!.runId!)! < decided.get(runs[i - 1]!.runId!)!) n++;
  return n;
}

/** Each run's Admitted=True condition time (ms, whole seconds) from the Run resources; NaN: none. */
export async function admittedAt(bench: ClusterBench): Promise<Map<string, number>> {
  const list = (await bench.kc
    .makeApiClient(k8s.CustomObjectsApi)
    .listNamespacedCustomObject({ group: "codeplane.dev", version: "v1alpha1", namespace: bench.namespace, plural: "runs" })) as {
    items: { spec: { runId: string }; status?: { conditions?: { type: string; status: string; lastTransitionTime: string }[] } }[];
  };
  return new Map(
    list.items.map((r) => [
      r.spec.runId,
      Date.parse(r.status?.conditions?.find((c) => c.type === "Admitted" && c.status === "True")?.lastTransitionTime ?? ""),
    ]),
  );
}
