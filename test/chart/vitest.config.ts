import { defineConfig } from "vitest/config";

// The Helm chart: `helm lint` and `helm template` (Helm built from the Go
// module proxy by hack/tools/helm.sh, cached) checked against the TypeScript
// builders and config. No cluster, no database; seconds once Helm is built.
export default defineConfig({
  test: {
    root: new URL("../..", import.meta.url).pathname,
    include: ["test/chart/**/*.test.ts"],
    environment: "node",
    testTimeout: 30_000,
    // The first run compiles Helm (about a minute with a warm Go module cache, more without).
    hookTimeout: 900_000,
  },
});
