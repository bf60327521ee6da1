import { describe, expect, it } from "vitest";
import { DIAGNOSTICS_MAX_BYTES, parseAgentDiagnostics } from "./agent-diagnostics.ts";

describe("parseAgentDiagnostics", () => {
  it("keeps the steps (rounded) and the notes", () => {
    expect(parseAgentDiagnostics(JSON.stringify({ steps_ms: { fetched: 12.6, restored: 40 }, notes: ["restored the environment: 0.4 MiB"] }))).toEqual({
      steps_ms: { fetched: 13, restored: 40 },
      notes: ["restored the environment: 0.4 MiB"],
    });
  });

  it("accepts a record without notes", () => {
    expect(parseAgentDiagnostics('{"steps_ms":{}}')).toEqual({ steps_ms: {}, notes: [] });
  });

  it("cuts long notes", () => {
    expect(parseAgentDiagnostics(JSON.stringify({ steps_ms: {}, notes: ["x".repeat(1000)] }))!.notes[0]).toHaveLength(300);
  });

  it("drops NUL characters, which Postgres' jsonb cannot hold", () => {
    expect(parseAgentDiagnostics(JSON.stringify({ steps_ms: {}, notes: ["a\u0000b"] }))!.notes).toEqual(["ab"]);
  });

  it.each([
    ["empty", ""],
    ["not JSON", "{"],
    ["not an object", "[]"],
    ["no steps", '{"notes":[]}'],
    ["a step name that is not a word", '{"steps_ms":{"Fetch ed":1}}'],
    ["a negative time", '{"steps_ms":{"a":-1}}'],
    ["a time that is not a number", '{"steps_ms":{"a":"1"}}'],
    ["notes that are not strings", '{"steps_ms":{},"notes":[1]}'],
    ["too many notes", JSON.stringify({ steps_ms: {}, notes: Array.from({ length: 21 }, () => "n") })],
    ["too many steps", JSON.stringify({ steps_ms: Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`s${i}`, 1])) })],
    ["too large", JSON.stringify({ steps_ms: {}, notes: ["x".repeat(DIAGNOSTICS_MAX_BYTES)] })],
  ])("refuses %s", (_, text) => {
    expect(parseAgentDiagnostics(text)).toBeNull();
  });
});
