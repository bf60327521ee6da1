import { describe, expect, it } from "vitest";
import { z } from "zod";
import { analysisStatusEnum } from "../../domain/analyses/analyses.schemas.ts";
import { runStatusEnum } from "../../domain/runs/runs.schemas.ts";
import { formatEnd, formatLine, formatSetup, formatStatus, formatTimeline } from "../sse.ts";
import { eventStream } from "./common.ts";

// The OpenAPI description of the log streams (each event and its data) must
// match what src/api/sse.ts writes.

/** The fields of one SSE block, as an EventSource client sees them. */
function fields(block: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of block.trimEnd().split("\n")) {
    const i = line.indexOf(":");
    out[line.slice(0, i)] = line.slice(i + 1).replace(/^ /, "");
  }
  return out;
}

describe("eventStream", () => {
  const run = eventStream("Run", runStatusEnum);
  const analysis = eventStream("Analysis", analysisStatusEnum);

  it("describes every event the stream writes", () => {
    const written = [
      formatStatus("running", "0:running"),
      formatStatus("completed", "8:completed"),
      formatSetup({ n: 42, ts: "2026-11-26T13:00:01.234Z", line: "Collecting requests==2.32.3" }, "0:preprocessing/42"),
      formatTimeline([
        { event: "created", at: "2026-11-26T13:00:00.000Z" },
        { event: "environment_ready", at: "2026-11-26T13:00:09.000Z", cache: "built" },
      ]),
      formatLine({ seq: 7, stream: "stdout", ts: "2026-01-02T03:04:05.678Z", line: 'a "quoted"\ttab' }),
      formatLine({ seq: 8, stream: "stderr", ts: "2026-01-02T03:04:05.679Z", line: "" }),
      formatEnd({ status: "failed", exit_code: 3 }),
      formatEnd({ status: "cancelled", exit_code: null }),
    ];
    // Each event's documented data: the contentSchema of the branch for its event name.
    type Branch = {
      properties: { event: { enum: string[] }; data: { contentSchema: { required: string[]; properties: Record<string, { enum?: string[] }> } } };
    };
    const branches = (z.toJSONSchema(run.itemSchema) as unknown as { $defs: Record<string, { anyOf: Branch[] }> }).$defs.RunLogEvent!.anyOf;
    for (const block of written) {
      const event = fields(block);
      expect(run.itemSchema.safeParse(event).success, block).toBe(true);
      const data = JSON.parse(event.data!) as Record<string, unknown>;
      const content = branches.find((b) => b.properties.event.enum.includes(event.event!))!.properties.data.contentSchema;
      expect(Object.keys(data).sort(), block).toEqual([...content.required].sort());
      if ("status" in data) expect(content.properties.status!.enum).toContain(data.status);
    }
    expect(run.schema).toBe(run.itemSchema);
  });

  it("refuses what the stream never writes", () => {
    expect(run.itemSchema.safeParse({ event: "message", data: "{}" }).success).toBe(false);
    expect(run.itemSchema.safeParse({ event: "stdout", data: "{}" }).success).toBe(false); // a line has its id
    expect(run.itemSchema.safeParse({ event: "end" }).success).toBe(false);
    expect(run.itemSchema.safeParse({ event: "setup", id: "0:running/3", data: "{}" }).success).toBe(false); // setup ids name the setup phase
    // An analysis has no environment to wait for: no setup events.
    // Nor a timeline: that is a run's.
    expect(analysis.itemSchema.safeParse(fields(formatTimeline([{ event: "created", at: "2026-11-26T13:00:00.000Z" }]))).success).toBe(false);
    expect(run.itemSchema.safeParse({ event: "timeline", data: "{}" }).success).toBe(true); // data is JSON text; its shape is contentSchema
    expect(analysis.itemSchema.safeParse(fields(formatSetup({ n: 1, ts: "2026-11-26T13:00:01.234Z", line: "x" }, "0:preprocessing/1"))).success).toBe(false);
  });

  it("names each kind's event component and lists its statuses in the data schema", () => {
    const doc = JSON.stringify(analysis.itemSchema.meta());
    expect(doc).toContain("AnalysisLogEvent");
    expect(run.contentType).toBe("text/event-stream");
  });
});
