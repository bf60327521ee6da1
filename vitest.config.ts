import { defineConfig } from "vitest/config";

// Unit tests: pure logic next to the code, no servers.
export default defineConfig({
  test: {
    include: ["src/**/*.test.ts"],
    environment: "node",
  },
});
