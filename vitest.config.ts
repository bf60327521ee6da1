import { defineConfig } from "vitest/config";

// Unit tests: pure logic next to the code, no servers. The workspace packages'
// tests (packages/*, each also runnable alone with its own config) are unit tests too.
export default defineConfig({
  test: {
    include: ["src/**/*.test.ts", "packages/*/src/**/*.test.ts"],
    environment: "node",
  },
});
