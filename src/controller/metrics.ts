import { Counter, type Registry } from "prom-client";
import type { WorkloadMetrics } from "./workload-reconciler.ts";

/** The controller's counters, on the process's registry (served at /metrics). */
export function workloadMetrics(registry: Registry): WorkloadMetrics {
  const unreconcilable = new Counter({
    name: "codeplane_workloads_unreconcilable_total",
    help: "Workloads marked failed because they could never be reconciled, by kind and reason.",
    labelNames: ["kind", "reason"],
    registers: [registry],
  });
  const untracked = new Counter({
    name: "codeplane_workloads_untracked_total",
    help: "Workloads found that this installation's database does not know (left alone), by kind.",
    labelNames: ["kind"],
    registers: [registry],
  });
  return {
    unreconcilable: (kind, reason) => unreconcilable.inc({ kind, reason }),
    untracked: (kind) => untracked.inc({ kind }),
  };
}
