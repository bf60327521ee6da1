import { defineConfig } from "vitest/config";

// Cluster tests: need a real Kubernetes (`make cluster-up`, or `make kind-up`).
// Run with `make cluster-test` or `npx vitest run --config test/cluster/vitest.config.ts`.
export default defineConfig({
  test: {
    root: new URL("../..", import.meta.url).pathname,
    include: ["test/cluster/**/*.test.ts"],
    environment: "node",
    testTimeout: 180_000,
    hookTimeout: 60_000,
    maxWorkers: 1,
  },
});
