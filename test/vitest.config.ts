import { defineConfig } from "vitest/config";

// Integration tests: a real Postgres server (started once by the global setup)
// and the real service over real HTTP.
export default defineConfig({
  test: {
    root: new URL("..", import.meta.url).pathname,
    include: ["test/**/*.test.ts"],
    // Fixtures are repositories the tests read (some hold test files of their own), never tests to run.
    exclude: ["test/cluster/**", "test/e2e/**", "test/chart/**", "test/helm/**", "test/fixtures/**", "node_modules/**"],
    globalSetup: ["test/setup/postgres.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Two cores: more workers than that only adds contention.
    maxWorkers: 2,
  },
});
