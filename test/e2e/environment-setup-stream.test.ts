import { execFile as execFileCb } from "node:child_process";
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gitListenerEnv, MIRROR, openTestCluster, until, type TestCluster } from "../helpers/cluster.ts";
import { startTestService, type Tenant, type TestService } from "../helpers/service.ts";
import { sseClient, type StreamEvent } from "../helpers/sse-client.ts";

// The run log stream's `setup` events on a real cluster: two runs of one
// commit wait for one environment build (pip installing through the package
// mirror on the node), each stream gets the build pod's install output live,
// between its preprocessing and running statuses, one client is cut and
// resumes from its last setup id, and a later run of the same key (a cache
// hit) gets none. Nothing leaves the machine.

const execFile = promisify(execFileCb);
const root = path.join(import.meta.dirname, "../..");
const FIXTURE = path.join(root, "test/fixtures/runnable/py-cli-requirements");

let cluster: TestCluster;
let svc: TestService;
let alice: Tenant;
let repo: { id: string; commit: string };
const cleanup: (() => void)[] = [];

async function register(): Promise<{ id: string; commit: string }> {
  const dir = mkdtempSync(path.join(tmpdir(), "cp-setup-stream-"));
  cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
  cpSync(FIXTURE, dir, { recursive: true });
  const git = (...args: string[]) =>
    execFile("git", ["-c", "user.name=Fixture", "-c", "user.email=fixture@example.com", "-c", "commit.gpgsign=false", ...args], { cwd: dir });
  await git("init", "-q", "-b", "main");
  await git("add", "-A");
  await git("commit", "-q", "-m", "py-cli-requirements as published");
  const commit = (await git("rev-parse", "HEAD")).stdout.trim();
  await git("clone", "-q", "--bare", dir, `${dir}.git`);
  cleanup.push(() => rmSync(`${dir}.git`, { recursive: true, force: true }));
  const url = await cluster.publish(`${dir}.git`, `setup-stream-${cluster.namespace}`);
  const res = await alice.api("/v1/repositories", { method: "POST", json: { url, name: "py-cli-requirements" } });
  if (res.status !== 201) throw new Error(`could not register the fixture: ${res.status} ${await res.text()}`);
  return { id: (await res.json()).id as string, commit };
}

interface Analysis {
  status: string;
  error: string | null;
  primary_ids: string[];
  environment: { key: string | null };
}

async function analysed(attempt = 1): Promise<Analysis> {
  const started = await alice.api(`/v1/repositories/${repo.id}/analysis/${repo.commit}`, { method: "POST", json: {} });
  expect(started.status, await started.clone().text()).toBeLessThan(300);
  const a = await until(`the analysis of ${repo.commit} to end`, 300_000, async () => {
    const got = (await (await alice.api(`/v1/repositories/${repo.id}/analysis/${repo.commit}`)).json()) as Analysis;
    return got.status === "completed" || got.status === "failed" ? got : undefined;
  });
  // The local cluster's drop of a not-yet-known pod's connections to the node (see environments.test.ts): once more.
  if (a.status === "failed" && attempt === 1 && /checkout failed: .*Failed to connect/s.test(a.error ?? "")) {
    expect((await alice.api(`/v1/repositories/${repo.id}/analysis/${repo.commit}`, { method: "DELETE" })).status).toBeLessThan(300);
    return analysed(2);
  }
  if (a.status === "failed") throw new Error(`analysis failed: ${a.error}`);
  return a;
}

async function startRun(primary: string): Promise<string> {
  const res = await alice.api(`/v1/repositories/${repo.id}/${repo.commit}/runs`, {
    method: "POST",
    json: { analyzed_experiment: primary, timeout_seconds: 600 },
  });
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()).run_id as string;
}

const streamUrl = (runId: string) => `${svc.url}/v1/runs/${runId}/logs/stream`;

/** The events as short words: status:<phase>, setup:<n>, stdout:<seq>, end. */
const trace = (events: StreamEvent[]) =>
  events.map((e) =>
    e.type === "status" ? `status:${e.data.status}` : e.type === "setup" ? `setup:${e.data.n}` : e.type === "end" ? "end" : `${e.type}:${e.data.seq}`,
  );

/** Every setup event comes after the preprocessing status and before the running status and the first line. */
function expectSetupInPlace(events: StreamEvent[]): void {
  const words = trace(events);
  const firstSetup = words.findIndex((w) => w.startsWith("setup:"));
  const lastSetup = words.findLastIndex((w) => w.startsWith("setup:"));
  if (firstSetup < 0) return;
  const preprocessing = words.indexOf("status:preprocessing");
  const running = words.indexOf("status:running");
  const firstLine = words.findIndex((w) => w.startsWith("stdout:") || w.startsWith("stderr:"));
  // A resumed client was given the preprocessing status on its first connection.
  if (preprocessing >= 0) expect(preprocessing, words.join(" ")).toBeLessThan(firstSetup);
  if (running >= 0) expect(lastSetup, words.join(" ")).toBeLessThan(running);
  if (firstLine >= 0) expect(lastSetup, words.join(" ")).toBeLessThan(firstLine);
}

beforeAll(async () => {
  cluster = await openTestCluster("cp-e2e-setup");
  const { stdout: catalog } = await execFile("node", [path.join(root, "hack/cluster/catalog.mjs")]);
  svc = await startTestService({
    KUBECONFIG: cluster.kubeconfig,
    CODEPLANE_NAMESPACE: cluster.namespace,
    CODEPLANE_IMAGE_PULL_POLICY: "Never",
    ...gitListenerEnv(),
    CODEPLANE_ENVIRONMENT_IMAGES: catalog.trim(),
    CODEPLANE_RUN_EGRESS_ALLOW: MIRROR.egressAllow,
    CODEPLANE_RUN_PREPROCESS_ENV: JSON.stringify(MIRROR.preprocessEnv),
  });
  alice = await svc.tenant();
  repo = await register();
}, 600_000);

afterAll(async () => {
  await svc?.close();
  await cluster?.cleanup();
  for (const c of cleanup) c();
});

describe("event: setup on the run log stream", () => {
  it("streams one build's install to the two runs waiting on it, resumes a cut client, and sends none on a cache hit", async () => {
    const analysis = await analysed();
    const envKey = analysis.environment.key!;
    expect(envKey).toMatch(/^[0-9a-f]{64}$/);
    const primary = analysis.primary_ids[0]!;

    // Two runs of the commit at once: both wait for the one build of its environment.
    const runA = await startRun(primary);
    const runB = await startRun(primary);
    const a1 = sseClient(streamUrl(runA), alice.key);
    const b = sseClient(streamUrl(runB), alice.key);

    // A is cut after its first setup lines (or after all of them, on a quick build) and resumes from its last setup id.
    await until("A's first setup lines", 600_000, () => a1.setup.length >= 2 || a1.events.some((e) => e.type === "status" && e.data.status === "running"));
    a1.es.close();
    const lastId = a1.setup.at(-1)?.id ?? "";
    expect(lastId, trace(a1.events).join(" ")).toMatch(/^0:preprocessing\/[0-9]+$/);
    const a2 = sseClient(streamUrl(runA), alice.key, { "Last-Event-ID": lastId });
    await Promise.all([a2.ended, b.ended]);

    for (const runId of [runA, runB]) {
      const run = await (await alice.api(`/v1/runs/${runId}`)).json();
      expect(run.status, run.error).toBe("completed");
      expect(run.environment).toMatchObject({ key: envKey, cache: "built" });
    }
    const stored = (await (await alice.api(`/v1/runs/${runA}/logs/setup`)).json()) as { content: string; status: string };
    expect(stored.status).toBe("ready");
    const storedLines = stored.content.split("\n");
    if (storedLines.at(-1) === "") storedLines.pop();
    expect(storedLines[0]).toMatch(/^==> \[1\/[0-9]+\] /);

    // B, never cut: every line of the install, numbered from 1, in place, equal to the stored log.
    expect(b.setup.map((e) => e.data.n)).toEqual(storedLines.map((_, i) => i + 1));
    expect(b.setup.map((e) => e.data.line)).toEqual(storedLines);
    expect(b.setup.map((e) => e.id)).toEqual(storedLines.map((_, i) => `0:preprocessing/${i + 1}`));
    expectSetupInPlace(b.events);
    expect(trace(b.events).filter((w) => w.startsWith("status:"))).toEqual(["status:pending", "status:preprocessing", "status:running", "status:completed"]);
    // Followed live: the kubelet's times of the install's lines, before the build ended (stored lines would carry its end).
    const env = (await (await alice.api(`/v1/environments/${envKey}`)).json()) as { completed_at: string };
    for (const e of b.setup) expect(Date.parse(e.data.ts!)).toBeLessThanOrEqual(Date.parse(env.completed_at));
    expect(new Set(b.setup.map((e) => e.data.ts)).size).toBeGreaterThan(1);

    // A, across its cut: the same lines, none lost and none repeated, in place on each connection.
    const aSetup = [...a1.setup, ...a2.setup];
    expect(aSetup.map((e) => e.data.n)).toEqual(storedLines.map((_, i) => i + 1));
    expect(aSetup.map((e) => e.data.line)).toEqual(storedLines);
    expectSetupInPlace(a1.events);
    expectSetupInPlace(a2.events);
    expect(trace(a2.events).filter((w) => w.startsWith("status:"))).toEqual(["status:running", "status:completed"]);
    expect(a2.lines.map((e) => e.data.line).join("\n")).toMatch(/csvstat: \d+ rows/);

    // One follow of the build for both runs and their three connections.
    const follows = svc.logs.filter((l) => l.includes("following the build's install log"));
    expect(follows, follows.join("\n")).toHaveLength(1);

    // A cache hit: the environment is restored, nothing is built, no setup event.
    const runC = await startRun(primary);
    const c = sseClient(streamUrl(runC), alice.key);
    await c.ended;
    const runCRow = await (await alice.api(`/v1/runs/${runC}`)).json();
    expect(runCRow.status, runCRow.error).toBe("completed");
    expect(runCRow.environment).toMatchObject({ key: envKey, cache: "hit" });
    expect(c.setup).toEqual([]);
    expect(trace(c.events)).toContain("status:running");
  }, 900_000);
});
