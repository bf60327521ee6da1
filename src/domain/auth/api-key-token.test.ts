import { describe, expect, it } from "vitest";
import { generateApiKey, hashApiKey, isWellFormedApiKey } from "./api-key-token.ts";

describe("API key tokens", () => {
  it("generates well-formed, unique keys whose hash is not the key", () => {
    const seen = new Set<string>();
    for (let i = 0; i < 200; i++) {
      const { key, prefix, hash } = generateApiKey();
      expect(key).toMatch(/^cp_[0-9A-Za-z]{38}$/);
      expect(isWellFormedApiKey(key)).toBe(true);
      expect(key.startsWith(prefix)).toBe(true);
      expect(hash).toBe(hashApiKey(key));
      expect(hash).not.toContain(key.slice(3));
      seen.add(key);
    }
    expect(seen.size).toBe(200);
  });

  it.each([
    ["empty", ""],
    ["wrong prefix", "xx_" + "a".repeat(38)],
    ["too short", "cp_abc"],
    ["bad characters", "cp_" + "-".repeat(38)],
  ])("rejects %s", (_name, key) => expect(isWellFormedApiKey(key)).toBe(false));

  it("rejects a key with one character changed (checksum)", () => {
    const { key } = generateApiKey();
    const i = 5;
    const swapped = key.slice(0, i) + (key[i] === "a" ? "b" : "a") + key.slice(i + 1);
    expect(isWellFormedApiKey(swapped)).toBe(false);
  });

  it("accepts and hashes a key made by an earlier build as it did (checksum and SHA-256 unchanged)", () => {
    const key = "cp_TK3ioQUggYF9sM4O0qAObvMjKbWcooMG2AoRns";
    expect(isWellFormedApiKey(key)).toBe(true);
    expect(hashApiKey(key)).toBe("2881ead700ace7379ae52c964d633e7a143194cf59d3528b52bbfe462882a8f6");
    expect(isWellFormedApiKey(key.slice(0, -1) + (key.endsWith("s") ? "t" : "s"))).toBe(false);
  });
});
