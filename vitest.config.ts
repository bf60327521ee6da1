import { defineConfig } from "vitest/config";

// Unit tests: pure logic next to the code, no servers. The workspace packages'
// tests (packages/*, each also runnable alone with its own config) are unit tests too.
export default defineConfig({
  test: {
    include: ["src/**/*.test.ts", "packages/*/src/**/*.test.ts"],
    environment: "node",
    // Generous: a test that spawns a process or parses a hostile input takes
    // a few seconds on a loaded 2-core machine, past vitest's 5 s default.
    testTimeout: 60_000,
  },
});
