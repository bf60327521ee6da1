import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "./config.ts";

// CODEPLANE_WARM_POOLS (issue 33): what an operator may write.

const KEY = "a".repeat(64);
const base = { DATABASE_URL: "postgres://x@127.0.0.1/db", CODEPLANE_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString("base64") };

describe("CODEPLANE_WARM_POOLS", () => {
  it("is empty when unset or empty: no pools", () => {
    expect(loadConfig(base).runs.warmPools).toEqual([]);
    expect(loadConfig({ ...base, CODEPLANE_WARM_POOLS: "" }).runs.warmPools).toEqual([]);
    expect(loadConfig({ ...base, CODEPLANE_WARM_POOLS: "[]" }).runs.warmPools).toEqual([]);
  });

  it("takes pools with their defaults", () => {
    const pools = loadConfig({ ...base, CODEPLANE_WARM_POOLS: JSON.stringify([{ name: "py", environment: KEY, size: 2 }]) }).runs.warmPools;
    expect(pools).toEqual([{ name: "py", environment: KEY, compute_type: "cpu-general", size: 2, idle_seconds: 1800 }]);
  });

  it.each([
    ["not JSON", "{", /must be JSON/],
    ["an unknown field", JSON.stringify([{ name: "py", environment: KEY, size: 2, image: "x" }]), /invalid warm pools/],
    ["a size of 0", JSON.stringify([{ name: "py", environment: KEY, size: 0 }]), /invalid warm pools/],
    ["a key that is no environment key", JSON.stringify([{ name: "py", environment: "main", size: 1 }]), /environment key/],
    ["a name that is no DNS label", JSON.stringify([{ name: "Py_1", environment: KEY, size: 1 }]), /DNS label/],
    [
      "two pools of one name",
      JSON.stringify([
        { name: "a", environment: KEY, size: 1 },
        { name: "a", environment: "b".repeat(64), size: 1 },
      ]),
      /unique/,
    ],
    [
      "two pools of one environment and compute type",
      JSON.stringify([
        { name: "a", environment: KEY, size: 1 },
        { name: "b", environment: KEY, size: 1 },
      ]),
      /one pool per environment/,
    ],
    ["an unknown compute type", JSON.stringify([{ name: "a", environment: KEY, compute_type: "tpu", size: 1 }]), /compute type 'tpu'/],
  ])("refuses %s, saying why", (_name, value, message) => {
    expect(() => loadConfig({ ...base, CODEPLANE_WARM_POOLS: value })).toThrow(ConfigError);
    expect(() => loadConfig({ ...base, CODEPLANE_WARM_POOLS: value })).toThrow(message);
  });
});
