import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startE2E, type E2E } from "../helpers/e2e.ts";
import { connectThroughOAuth, MCP_ALL_TOOL_SCOPES, MemoryProvider } from "../helpers/mcp-oauth.ts";
import type { Tenant } from "../helpers/service.ts";

// The MCP tools end to end, as an agent uses them: analyse a commit and wait
// for the result, run its experiment and a command on a real kubelet, wait
// for them with get_run, read their output incrementally with get_run_logs,
// and cancel a run. Waits are measured: a waiting call must answer soon after
// the change it waited for, and hold no longer than asked when nothing changes.
// Alice's agent signs in with OAuth (discovery from the 401, registration, the
// sign-in and consent page), bob's uses an API key as its bearer.

const TRAIN = `"""Train a tiny model."""
import argparse
import json
import os


def main():
    parser = argparse.ArgumentParser(description="Fits a line to the data.")
    parser.add_argument("--epochs", type=int, default=3, help="passes over the data")
    args = parser.parse_args()
    print(json.dumps({"epochs": args.epochs, "token": os.environ["API_TOKEN"]}))


if __name__ == "__main__":
    main()
`;
// Lines over about five seconds, on both streams, so reads see them arrive.
const SLOW = '#!/bin/sh\nfor i in 1 2 3 4 5 6 7 8 9 10; do echo "tick $i"; echo "tock $i" >&2; sleep 0.5; done\nexit 0\n';

let e: E2E;
let alice: Tenant;
let bob: Tenant;
let repoId: string;
let tip: string;
let a: Client;
let b: Client;

async function connect(key: string): Promise<Client> {
  const client = new Client({ name: "codeplane-e2e", version: "1.0.0" }, { versionNegotiation: { mode: { pin: "2026-07-28" } } });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${e.svc.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
  return client;
}

type Result = { isError?: boolean; content: { text?: string }[]; structuredContent?: Record<string, any> };
async function ok(client: Client, name: string, args: Record<string, unknown>): Promise<Record<string, any>> {
  const r = (await client.callTool({ name, arguments: args }, { timeout: 70_000 })) as Result;
  expect(r.isError, `${name}: ${r.content[0]?.text}`).toBeFalsy();
  return r.structuredContent!;
}
async function timed<T>(f: () => Promise<T>): Promise<[T, number]> {
  const t0 = Date.now();
  const v = await f();
  return [v, (Date.now() - t0) / 1000];
}
const TERMINAL = ["completed", "failed", "cancelled"];

/** get_run with a wait until the run ends; every status seen and how long each call held. */
async function waitForRun(runId: string, budgetMs = 180_000) {
  const seen: { status: string; held: number }[] = [];
  const until = Date.now() + budgetMs;
  for (;;) {
    const [run, held] = await timed(() => ok(a, "get_run", { run_id: runId, wait_seconds: 30 }));
    seen.push({ status: run.status, held });
    if (TERMINAL.includes(run.status)) return { run, seen };
    if (Date.now() > until) throw new Error(`run ${runId} did not end: ${JSON.stringify(seen)}`);
  }
}

beforeAll(async () => {
  e = await startE2E("cp-e2e-mcp", {
    env: { CODEPLANE_LOG_LEVEL: "info" },
    prepare: async (f) => void (tip = await f.commit("main", { "train.py": TRAIN, "slow.sh": { exec: SLOW } })),
  });
  ({ alice, repoId } = e);
  bob = await e.svc.tenant();
  // Asking for every tool's scope at once (the challenge names the read-only ones; test/mcp/oauth.test.ts steps up from there).
  a = await connectThroughOAuth(e.svc.url, new MemoryProvider(), alice.key, MCP_ALL_TOOL_SCOPES);
  b = await connect(bob.key);
});
afterAll(async () => {
  await a?.close().catch(() => undefined);
  await b?.close().catch(() => undefined);
  await e?.close();
});

describe("MCP tools on a real cluster", () => {
  it("analyses a commit, waiting with get_analysis until it completes", async () => {
    const started = await ok(a, "start_analysis", { repository_id: repoId, commit_hash: "main" });
    expect(started).toMatchObject({ status: "pending", commit_hash: tip });
    const again = await ok(a, "start_analysis", { repository_id: repoId, commit_hash: tip.slice(0, 12) });
    expect(again.id).toBe(started.id);

    const calls: { status: string; held: number }[] = [];
    let analysis: Record<string, any>;
    for (;;) {
      const [got, held] = await timed(() => ok(a, "get_analysis", { repository_id: repoId, commit_hash: "main", wait_seconds: 50 }));
      calls.push({ status: got.status, held });
      analysis = got;
      if (TERMINAL.includes(got.status) || calls.length > 10) break;
    }
    console.log("get_analysis calls (status, seconds held):", JSON.stringify(calls));
    expect(analysis).toMatchObject({ id: started.id, status: "completed", primary_ids: expect.arrayContaining(["python:train.py"]) });
    expect(analysis.env_vars).toEqual({ valid: false, required_env_vars: ["API_TOKEN"], missing_env_vars: ["API_TOKEN"] });
    // Each call answered at a change, well before its 50 s: no tight polling, no full-length holds.
    expect(calls.length).toBeLessThanOrEqual(4);
    for (const c of calls) expect(c.held).toBeLessThan(50);

    const [done, held] = await timed(() => ok(a, "get_analysis", { repository_id: repoId, commit_hash: "main", wait_seconds: 50 }));
    expect(done.status).toBe("completed");
    expect(held).toBeLessThan(2); // an ended analysis answers at once
    const bobs = (await b.callTool({ name: "get_analysis", arguments: { repository_id: repoId, commit_hash: "main" } })) as Result;
    expect(bobs).toMatchObject({ isError: true, content: [{ text: "Repository not found" }] });
  }, 240_000);

  it("runs the experiment once its variable is set, waiting with get_run, and reads its output", async () => {
    const refused = (await a.callTool({
      name: "run_experiment",
      arguments: { repository_id: repoId, commit_hash: "main", experiment_id: "python:train.py" },
    })) as Result;
    expect(refused.isError).toBe(true);
    expect(refused.content[0]!.text).toMatch(/missing environment variables: API_TOKEN/);
    await ok(a, "set_environment_variable", { name: "API_TOKEN", value: "tok-mcp", repository_id: repoId });

    const run = await ok(a, "run_experiment", { repository_id: repoId, commit_hash: "main", experiment_id: "python:train.py", parameters: { epochs: 7 } });
    expect(run).toMatchObject({ status: "pending", experiment_id: "python:train.py", run_config: { command: ["python3", "train.py", "--epochs", "7"] } });
    const { run: done, seen } = await waitForRun(run.run_id);
    console.log("get_run calls (status, seconds held):", JSON.stringify(seen));
    expect(done).toMatchObject({ status: "completed", exit_code: 0 });
    // The statuses came in order, one call per change (pending -> preprocessing -> running -> completed, some possibly too quick to see).
    expect(seen.length).toBeLessThanOrEqual(5);

    const logs = await ok(a, "get_run_logs", { run_id: run.run_id, wait_seconds: 10 });
    expect(logs.lines.filter((l: { stream: string }) => l.stream === "stdout").map((l: { line: string }) => JSON.parse(l.line))).toEqual([
      { epochs: 7, token: "tok-mcp" },
    ]);
    // Once the archive has every line, the reader is told nothing more will come.
    let last = logs;
    for (let i = 0; i < 20 && !last.complete; i++) last = await ok(a, "get_run_logs", { run_id: run.run_id, after: last.next_after, wait_seconds: 5 });
    expect(last).toMatchObject({ complete: true, status: "completed" });
    expect(await ok(a, "get_run_logs", { run_id: run.run_id, after: last.next_after, wait_seconds: 5 })).toMatchObject({
      complete: true,
      lines: [],
      next_after: last.next_after,
    });
  }, 240_000);

  it("reads a command's output incrementally with after, without losing or repeating a line", async () => {
    const run = await ok(a, "run_command", { repository_id: repoId, commit_hash: "main", command: ["sh", "slow.sh"] });
    const got: { seq: number; stream: string; line: string }[] = [];
    const batches: number[] = [];
    let after = 0;
    let complete = false;
    const deadline = Date.now() + 180_000;
    while (!complete && Date.now() < deadline) {
      const page = await ok(a, "get_run_logs", { run_id: run.run_id, after, wait_seconds: 20 });
      if (page.lines.length) batches.push(page.lines.length);
      got.push(...page.lines);
      expect(page.next_after).toBe(page.lines.at(-1)?.seq ?? after);
      after = page.next_after;
      complete = page.complete;
    }
    console.log("get_run_logs batches (lines per call):", JSON.stringify(batches));
    expect(complete).toBe(true);
    const seqs = got.map((l) => l.seq);
    expect(seqs).toEqual([...seqs].sort((x, y) => x - y));
    expect(new Set(seqs).size).toBe(seqs.length);
    expect(got.filter((l) => l.stream === "stdout").map((l) => l.line)).toEqual(Array.from({ length: 10 }, (_, i) => `tick ${i + 1}`));
    expect(got.filter((l) => l.stream === "stderr").map((l) => l.line)).toEqual(Array.from({ length: 10 }, (_, i) => `tock ${i + 1}`));
    // The lines came over several calls, as they were written.
    expect(batches.length).toBeGreaterThan(1);
    expect((await ok(a, "get_run", { run_id: run.run_id })).status).toBe("completed");
  }, 240_000);

  it("cancels a run; a wait with nothing changing holds for the time asked", async () => {
    const run = await ok(a, "run_command", { repository_id: repoId, commit_hash: "main", command: ["sleep", "300"] });
    let status = run.status;
    for (let i = 0; i < 10 && status !== "running"; i++) status = (await ok(a, "get_run", { run_id: run.run_id, wait_seconds: 30 })).status;
    expect(status).toBe("running");
    const [still, held] = await timed(() => ok(a, "get_run", { run_id: run.run_id, wait_seconds: 3 }));
    console.log(`get_run on an unchanging run with wait_seconds 3 held ${held.toFixed(2)} s`);
    expect(still.status).toBe("running");
    expect(held).toBeGreaterThanOrEqual(2.9);
    expect(held).toBeLessThan(5);

    const bobs = (await b.callTool({ name: "cancel_run", arguments: { run_id: run.run_id } })) as Result;
    expect(bobs).toMatchObject({ isError: true, content: [{ text: "Run not found" }] });

    const cancelled = await ok(a, "cancel_run", { run_id: run.run_id });
    expect(cancelled.run_id).toBe(run.run_id);
    const { run: final } = await waitForRun(run.run_id, 60_000);
    expect(final.status).toBe("cancelled");
    const again = (await a.callTool({ name: "cancel_run", arguments: { run_id: run.run_id } })) as Result;
    expect(again.isError).toBe(true);
  }, 180_000);
});
