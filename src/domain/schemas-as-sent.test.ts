import { describe, expect, it } from "vitest";
import { createApiKeySchema } from "./auth/api-keys.schemas.ts";
import { createRepositorySchema } from "./repositories/repositories.schemas.ts";

// The OpenAPI document states lengths and patterns of what a client sends; a
// value outside them must be refused even if trimming would bring it inside
// (found by make fuzz: a 101-character key name with a leading tab was accepted).

describe("lengths and patterns hold for the value as sent", () => {
  it.each([
    ["a key name of 101 characters that trims to 100", createApiKeySchema, { name: `\t${"k".repeat(100)}` }, false],
    ["a key name of 100 characters", createApiKeySchema, { name: "k".repeat(100) }, true],
    ["a key name with spaces around it, within the length", createApiKeySchema, { name: " ci " }, true],
    ["a key name of spaces only", createApiKeySchema, { name: "   " }, false],
    ["a repository name with spaces around it", createRepositorySchema, { url: "https://h/r", name: " r " }, false],
    ["a clone URL of 2049 characters that trims to 2048", createRepositorySchema, { url: ` https://h/${"r".repeat(2038)}` }, false],
  ] as const)("%s: accepted %s", (_name, schema, input, ok) => {
    expect((schema as { safeParse(v: unknown): { success: boolean } }).safeParse(input).success).toBe(ok);
  });

  it("drops the spaces around a key name once it is accepted", () => {
    expect(createApiKeySchema.parse({ name: " ci " }).name).toBe("ci");
  });
});
