import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { until } from "../helpers/cluster.ts";
import { startE2E, type E2E } from "../helpers/e2e.ts";

// Stored output is capped per stream: the start is kept, the rest dropped,
// and the run says so; live streaming is not affected by the cap.

let e: E2E;
beforeAll(async () => {
  e = await startE2E("cp-e2e-cap", { env: { CODEPLANE_LOG_MAX_BYTES: "1024" } });
});
afterAll(() => e?.close());

describe("stored output cap", () => {
  it("keeps the first CODEPLANE_LOG_MAX_BYTES of a stream and marks it truncated", async () => {
    const res = await e.alice.api(`/v1/repositories/${e.repoId}/main/runs`, {
      method: "POST",
      json: { command: ["sh", "-c", 'i=0; while [ $i -lt 500 ]; do i=$((i+1)); echo "line $i"; done; echo small >&2'] },
    });
    const run = await res.json();
    await until("the logs to be complete", 120_000, async () => {
      const row = await e.svc.db.selectFrom("runs").select(["status", "logs_complete"]).where("id", "=", run.run_id).executeTakeFirst();
      return row?.logs_complete && row.status === "completed";
    });
    const stdout = await (await e.alice.api(`/v1/runs/${run.run_id}/logs/stdout`)).json();
    expect(stdout.truncated).toBe(true);
    expect(stdout.size).toBeLessThanOrEqual(1024);
    expect(stdout.size).toBeGreaterThan(900);
    expect(stdout.content.startsWith("line 1\nline 2\n")).toBe(true);
    expect(stdout.content.endsWith("\n")).toBe(true);
    const stderr = await (await e.alice.api(`/v1/runs/${run.run_id}/logs/stderr`)).json();
    expect(stderr).toMatchObject({ content: "small\n", truncated: false });
  });
});
