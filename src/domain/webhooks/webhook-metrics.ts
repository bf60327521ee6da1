import { Counter, type Registry } from "prom-client";

/** Deliveries by event and outcome, and check-run updates by outcome, on the process's registry (/metrics). */
export function webhookMetrics(registry: Registry) {
  const deliveries = new Counter({
    name: "codeplane_github_webhook_deliveries_total",
    help: "GitHub webhook deliveries by event and outcome: at intake (accepted, duplicate, redelivered, unsigned) and once handled (handled, skipped, retried, failed).",
    labelNames: ["event", "outcome"],
    registers: [registry],
  });
  const checkRuns = new Counter({
    name: "codeplane_github_check_run_updates_total",
    help: "Check-run creations and updates sent to GitHub, by outcome (sent, retried, abandoned).",
    labelNames: ["outcome"],
    registers: [registry],
  });
  return {
    delivery: (event: string, outcome: string) => deliveries.inc({ event, outcome }),
    checkRun: (outcome: string) => checkRuns.inc({ outcome }),
  };
}
