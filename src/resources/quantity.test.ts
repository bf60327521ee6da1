import { describe, expect, it } from "vitest";
import { cpuMillis, formatCpu, formatMemory, memoryBytes, presetRequests } from "./quantity.ts";

describe("quantities", () => {
  it.each([
    ["2", 2000],
    ["250m", 250],
    ["0.5", 500],
    ["1.0005", 1001],
    ["0", 0],
    ["two", null],
    ["1Gi", null],
    ["-1", null],
  ])("cpuMillis(%s) = %s", (q, n) => expect(cpuMillis(q)).toBe(n));

  it.each([
    ["256Mi", 256 * 2 ** 20],
    ["1Gi", 2 ** 30],
    ["1G", 1e9],
    ["1.5Gi", 1.5 * 2 ** 30],
    ["1048576", 2 ** 20],
    ["64k", 64_000],
    ["0", 0],
    ["1gb", null],
    ["100m", null],
  ])("memoryBytes(%s) = %s", (q, n) => expect(memoryBytes(q)).toBe(n));

  it("reads a preset's requests, absent ones as 0", () => {
    expect(presetRequests({ cpu: "250m", memory: "256Mi", "nvidia.com/gpu": "1" })).toEqual({ cpu: 250, memory: 256 * 2 ** 20 });
    expect(presetRequests({})).toEqual({ cpu: 0, memory: 0 });
  });

  it("writes them back as people do", () => {
    expect([formatCpu(2000), formatCpu(1500), formatCpu(0)]).toEqual(["2", "1500m", "0"]);
    expect([formatMemory(2 ** 30), formatMemory(1536 * 2 ** 20), formatMemory(1e9), formatMemory(0)]).toEqual(["1Gi", "1536Mi", "1000000000", "0"]);
  });
});
