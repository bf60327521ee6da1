import { defineConfig } from "vitest/config";

// This package's unit tests alone (npm test -w <package>); the repository's
// unit run (vitest.config.ts at the root) runs them too.
export default defineConfig({
  test: {
    root: import.meta.dirname,
    include: ["src/**/*.test.ts"],
    environment: "node",
  },
});
