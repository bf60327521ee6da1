import { execFile as execFileCb } from "node:child_process";
import { readFileSync } from "node:fs";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { until } from "../helpers/cluster.ts";
import { startE2E, type E2E } from "../helpers/e2e.ts";
import { sseClient } from "../helpers/sse-client.ts";

// The API server is killed and started again while a run streams: the pod-log
// follows (the SSE stream's and the archiver's) and the informers break and
// come back, and neither the client nor the stored log loses or repeats a line.

const execFile = promisify(execFileCb);
const root = new URL("../..", import.meta.url).pathname;
let e: E2E;
beforeAll(async () => {
  e = await startE2E("cp-e2e-restart");
});
afterAll(() => e?.close());

describe("an API server restart mid-stream", () => {
  it("loses and repeats nothing, live or stored", async () => {
    const pidFile = `${process.env.CODEPLANE_RUN_DIR ?? "/run/codeplane-cluster"}/pids/kube-apiserver.pid`;
    let pid: number;
    try {
      pid = Number(readFileSync(pidFile, "utf8").trim());
    } catch {
      throw new Error(`this test restarts the local cluster's API server; ${pidFile} is missing (is this a kind cluster? run it on the local cluster)`);
    }
    const lines = 60;
    const run = await (
      await e.alice.api(`/v1/repositories/${e.repoId}/main/runs`, {
        method: "POST",
        json: { command: ["sh", "-c", `i=0; while [ $i -lt ${lines} ]; do i=$((i+1)); echo "tick $i"; sleep 0.5; done`] },
      })
    ).json();
    const client = sseClient(`${e.svc.url}/v1/runs/${run.run_id}/logs/stream`, e.alice.key);
    await until("the first lines", 90_000, async () => client.lines.length >= 5 || undefined);
    process.kill(pid, "SIGKILL");
    await new Promise((r) => setTimeout(r, 3000));
    await execFile(`${root}hack/cluster/up.sh`, [], { timeout: 120_000 });
    await client.ended;
    expect(client.lines.map((l) => l.data.line)).toEqual(Array.from({ length: lines }, (_, i) => `tick ${i + 1}`));
    expect(client.events[client.events.length - 1]).toEqual({ type: "end", data: { status: "completed", exit_code: 0 } });
    const stored = await (await e.alice.api(`/v1/runs/${run.run_id}/logs/stdout`)).json();
    expect(stored.content).toBe(Array.from({ length: lines }, (_, i) => `tick ${i + 1}\n`).join(""));
  });
});
