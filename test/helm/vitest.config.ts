import { defineConfig } from "vitest/config";

// The Helm end-to-end suite: the chart from this checkout installed into the
// local cluster (`make cluster-up images`) with docs/operators/helm.md's commands, a
// throw-away Postgres on the node address, then helm test, streaming, an
// upgrade under load, a failover and the uninstall. One release, one file,
// its tests in order. `make test-helm`.
export default defineConfig({
  test: {
    root: new URL("../..", import.meta.url).pathname,
    include: ["test/helm/**/*.test.ts"],
    environment: "node",
    testTimeout: 300_000,
    // The first run builds Helm (hack/tools/helm.sh): minutes without a Go module cache.
    hookTimeout: 900_000,
    maxWorkers: 1,
    fileParallelism: false,
  },
});
