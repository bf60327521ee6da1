import { describe, expect, it } from "vitest";
import { poolFor, warmPoolsSchema } from "./warm-pools.ts";

// Which warm pool a run gets.

const KEY = "a".repeat(64);

describe("poolFor", () => {
  const pools = warmPoolsSchema.parse([
    { name: "py", environment: KEY, size: 2 },
    { name: "py-big", environment: KEY, compute_type: "cpu-memory", size: 1 },
  ]);
  it("matches the run's environment key and compute type, both", () => {
    expect(poolFor(pools, KEY, "cpu-general")?.name).toBe("py");
    expect(poolFor(pools, KEY, "cpu-memory")?.name).toBe("py-big");
    expect(poolFor(pools, KEY, "gpu-a10g")).toBeNull();
    expect(poolFor(pools, "b".repeat(64), "cpu-general")).toBeNull();
    expect(poolFor(pools, undefined, "cpu-general")).toBeNull();
  });
});
