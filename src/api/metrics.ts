import { collectDefaultMetrics, Counter, Histogram, Registry } from "prom-client";

export interface HttpMetrics {
  registry: Registry;
  observe(method: string, route: string, status: number, seconds: number): void;
}

/** On the given registry, or one per app instance, so tests that build several apps don't collide. */
export function createHttpMetrics(registry: Registry = new Registry()): HttpMetrics {
  collectDefaultMetrics({ register: registry, prefix: "codeplane_" });
  const requests = new Counter({
    name: "codeplane_http_requests_total",
    help: "HTTP requests by method, route template and status.",
    labelNames: ["method", "route", "status"],
    registers: [registry],
  });
  const duration = new Histogram({
    name: "codeplane_http_request_duration_seconds",
    help: "HTTP request latency by method and route template.",
    labelNames: ["method", "route"],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  return {
    registry,
    observe(method, route, status, seconds) {
      requests.inc({ method, route, status: String(status) });
      duration.observe({ method, route }, seconds);
    },
  };
}
