import { defineConfig } from "vitest/config";

// This package's unit tests alone (npm test -w <package>); the repository's
// unit run (vitest.config.ts at the root) runs them too.
export default defineConfig({
  test: {
    root: import.meta.dirname,
    include: ["src/**/*.test.ts"],
    environment: "node",
    // Generous: a test that spawns a process or parses a hostile input takes
    // a few seconds on a loaded 2-core machine, past vitest's 5 s default.
    testTimeout: 60_000,
  },
});
