import { defineConfig } from "vitest/config";

// End-to-end: the real service against a real Postgres (global setup) and a
// real Kubernetes (`make cluster-up` or `make kind-up`; KUBECONFIG or
// .cluster/kubeconfig). Files run one at a time: they share one node.
export default defineConfig({
  test: {
    root: new URL("../..", import.meta.url).pathname,
    include: ["test/e2e/**/*.test.ts"],
    globalSetup: ["test/setup/postgres.ts"],
    testTimeout: 180_000,
    hookTimeout: 120_000,
    maxWorkers: 1,
    fileParallelism: false,
  },
});
