import { execFile as execFileCb } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gitListenerEnv, MIRROR, openTestCluster, until, type TestCluster } from "../helpers/cluster.ts";
import { startTestService, type Tenant, type TestService } from "../helpers/service.ts";

// Real repositories as they are (test/fixtures/runnable, written in the style
// of real projects): each is published to the cluster's git daemon, analysed,
// and its primary experiment run with its defaults, in the catalog image that
// fits it, its dependencies installed by a build Job through the package
// mirror on the node and restored into the run. Nothing leaves the machine.

const execFile = promisify(execFileCb);
const root = path.join(import.meta.dirname, "../..");
const RUNNABLE = path.join(root, "test/fixtures/runnable");

/** The repositories that run, with the line their primary experiment prints and the image the catalog gives them. */
const RUNS: { repo: string; image: string; prints: RegExp; computeType?: string }[] = [
  { repo: "py-cli-requirements", image: "codeplane-runner:dev", prints: /csvstat: \d+ rows, \d+ numeric columns/ },
  { repo: "py-uv-package", image: "codeplane-runner:dev", prints: /tidewatch: .* high water/ },
  { repo: "node-cli-lock", image: "codeplane-runner:dev", prints: /todo-digest: \d+ open, \d+ done/ },
  { repo: "pnpm-workspace-app", image: "codeplane-runner:dev", prints: /recipe-scaler: scaled \d+ ingredients/ },
  { repo: "go-cli", image: "codeplane-go:dev", prints: /wordfreq: \d+ distinct words in \d+ file/ },
  // cobra and golang.org/x/text, downloaded by the build through the mirror's Go module proxy
  { repo: "go-cobra-cli", image: "codeplane-go:dev", prints: /ledger: 14 entries in 5 categories, total 1,968\.05/ },
  { repo: "make-c-program", image: "codeplane-build:dev", prints: /primes: \d+ primes below/ },
  { repo: "notebook-papermill", image: "codeplane-runner:dev", prints: /reading summary: \d+ books/ },
  { repo: "py-newer-python", image: "codeplane-python-next:dev", prints: /inventory report: / },
  { repo: "py-torch-standin", image: "codeplane-torch-standin:dev", prints: /torch version: 2\.15\.0\+codeplane\.standin/, computeType: "gpu-standin" },
  // Its own image, from its .devcontainer/devcontainer.json, allowed below (CODEPLANE_ENVIRONMENT_ALLOWED_REGISTRIES):
  // Python 3.13 where the catalog's fit for requires-python >=3.11 is the runner's 3.11. Built once, for the contract check.
  { repo: "py-devcontainer", image: "docker.io/library/codeplane-python-next:dev", prints: /logsift: 7 lines from logs\/api\.jsonl on python 3\.13\./ },
];

let cluster: TestCluster;
let svc: TestService;
let alice: Tenant;
const repos = new Map<string, { id: string; commit: string }>();
const cleanup: (() => void)[] = [];

async function catalog(): Promise<string> {
  const { stdout } = await execFile("node", [path.join(root, "hack/cluster/catalog.mjs")]);
  return stdout.trim();
}

/** The fixture folder as a one-commit git repository, published to the cluster's git daemon and registered. */
async function register(name: string): Promise<{ id: string; commit: string }> {
  const dir = mkdtempSync(path.join(tmpdir(), `cp-runnable-${name}-`));
  cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
  cpSync(path.join(RUNNABLE, name), dir, { recursive: true });
  const git = (...args: string[]) =>
    execFile("git", ["-c", "user.name=Fixture", "-c", "user.email=fixture@example.com", "-c", "commit.gpgsign=false", ...args], { cwd: dir });
  await git("init", "-q", "-b", "main");
  await git("add", "-A");
  await git("commit", "-q", "-m", `${name} as published`);
  const commit = (await git("rev-parse", "HEAD")).stdout.trim();
  await git("clone", "-q", "--bare", dir, `${dir}.git`);
  cleanup.push(() => rmSync(`${dir}.git`, { recursive: true, force: true }));
  const url = await cluster.publish(`${dir}.git`, `${name}-${cluster.namespace}`);
  const res = await alice.api("/v1/repositories", { method: "POST", json: { url, name } });
  if (res.status !== 201) throw new Error(`could not register ${name}: ${res.status} ${await res.text()}`);
  return { id: (await res.json()).id as string, commit };
}

async function analysed(repo: { id: string; commit: string }): Promise<Analysis> {
  const started = await alice.api(`/v1/repositories/${repo.id}/analysis/${repo.commit}`, { method: "POST", json: {} });
  expect(started.status, await started.clone().text()).toBeLessThan(300);
  const a = await until(`the analysis of ${repo.commit} to end`, 300_000, async () => {
    const got = (await (await alice.api(`/v1/repositories/${repo.id}/analysis/${repo.commit}`)).json()) as Analysis;
    return got.status === "completed" || got.status === "failed" ? got : undefined;
  });
  if (a.status === "failed") throw new Error(`analysis failed: ${a.error}`);
  return a;
}

interface Analysis {
  status: string;
  error: string | null;
  primary_ids: string[];
  environment: { key: string | null; problem: string | null };
}

async function finished(runId: string) {
  return until(`run ${runId} to finish`, 900_000, async () => {
    const run = await (await alice.api(`/v1/runs/${runId}`)).json();
    return ["completed", "failed", "cancelled"].includes(run.status) ? run : undefined;
  });
}

async function stdout(runId: string): Promise<string> {
  await until(
    "logs to be archived",
    60_000,
    async () => (await svc.db.selectFrom("runs").select("logs_complete").where("id", "=", runId).executeTakeFirst())?.logs_complete,
  );
  return (await (await alice.api(`/v1/runs/${runId}/logs/stdout`)).json()).content;
}

/**
 * Every step of a run that printed, in order, in time within the cluster's whole seconds; read once
 * its output is archived (first_output is the first stored line). environment_ready only for a run
 * with an environment key (one with nothing to install runs in its image as it is).
 */
function expectWholeTimeline(run: { timeline: { event: string; at: string; cache?: string }[]; environment: { key: string | null; cache: string } }) {
  const restored = run.environment.key !== null;
  expect(run.timeline.map((e) => e.event)).toEqual([
    "created",
    "admitted",
    "scheduled",
    "image_ready",
    "checked_out",
    ...(restored ? ["environment_ready"] : []),
    "started",
    "first_output",
    "ended",
  ]);
  if (restored) expect(run.timeline.find((e) => e.event === "environment_ready")?.cache).toBe(run.environment.cache);
  const times = run.timeline.map((e) => Date.parse(e.at));
  for (let i = 1; i < times.length; i++) expect(times[i], JSON.stringify(run.timeline)).toBeGreaterThanOrEqual(times[i - 1]! - 1000);
}

async function runPrimary(repo: { id: string; commit: string }, primary: string, computeType?: string) {
  const res = await alice.api(`/v1/repositories/${repo.id}/${repo.commit}/runs`, {
    method: "POST",
    json: { analyzed_experiment: primary, ...(computeType && { compute_type: computeType }), timeout_seconds: 600 },
  });
  return res;
}

beforeAll(async () => {
  cluster = await openTestCluster("cp-e2e-env");
  const cpuGeneral = { requests: { cpu: "100m", memory: "256Mi" }, limits: { cpu: "2", memory: "2Gi" } };
  svc = await startTestService({
    KUBECONFIG: cluster.kubeconfig,
    CODEPLANE_NAMESPACE: cluster.namespace,
    CODEPLANE_IMAGE_PULL_POLICY: "Never",
    ...gitListenerEnv(),
    CODEPLANE_ENVIRONMENT_IMAGES: await catalog(),
    // The stand-in GPU preset: the same node, and the image that provides torch.
    CODEPLANE_COMPUTE_TYPES: JSON.stringify({ "cpu-general": cpuGeneral, "gpu-standin": cpuGeneral }),
    CODEPLANE_RUN_EGRESS_ALLOW: MIRROR.egressAllow,
    CODEPLANE_RUN_PREPROCESS_ENV: JSON.stringify(MIRROR.preprocessEnv),
    // py-devcontainer declares the catalog's own Python 3.13 image (the local cluster has it); nothing else is allowed.
    CODEPLANE_ENVIRONMENT_ALLOWED_REGISTRIES: "docker.io/library/codeplane-python-next",
  });
  alice = await svc.tenant();
  for (const name of [...RUNS.map((r) => r.repo), "rust-no-image"]) repos.set(name, await register(name));
}, 600_000);

afterAll(async () => {
  await svc?.close();
  await cluster?.cleanup();
  for (const c of cleanup) c();
});

describe("real repositories run as they are", () => {
  for (const r of RUNS) {
    it(`${r.repo}: its primary experiment runs in ${r.image} and prints its own output`, async () => {
      const repo = repos.get(r.repo)!;
      const analysis = await analysed(repo);
      // The analysis shows the default compute type's view: torch is provided only on the stand-in GPU preset.
      if (r.computeType) expect(analysis.environment.problem).toMatch(/gpu-standin/);
      else expect(analysis.environment.problem).toBeNull();
      const res = await runPrimary(repo, analysis.primary_ids[0]!, r.computeType);
      expect(res.status, await res.clone().text()).toBe(201);
      const run = await finished((await res.json()).run_id);
      const stderr = run.status === "completed" ? "" : (await (await alice.api(`/v1/runs/${run.run_id}/logs/stderr`)).json()).content.slice(-3000);
      expect(run.status, `${run.error}\n${stderr}`).toBe("completed");
      expect(run.environment.image).toBe(r.image);
      expect(await stdout(run.run_id)).toMatch(r.prints);
      expectWholeTimeline(await (await alice.api(`/v1/runs/${run.run_id}`)).json());
    }, 900_000);
  }

  it("go-cobra-cli: its build downloaded its modules through the Go module proxy on the node, and its run built from them alone", async () => {
    // (after its run above, which built its environment)
    const repo = repos.get("go-cobra-cli")!;
    const analysis = await analysed(repo);
    const built = (await (await alice.api(`/v1/environments/${analysis.environment.key}`)).json()) as { status: string; log: string };
    expect(built.status, built.log).toBe("ready");
    expect(built.log).toMatch(/==> \[1\/1\] go mod download/);
    expect(built.log).not.toMatch(/environment build failed/);
    // the proxy's access log (hack/cluster/up.sh: mirror-go): a pod fetched cobra's zip from it
    const access = path.join(process.env.CODEPLANE_CLUSTER_DIR ?? path.join(root, ".cluster"), "logs", "mirror-go.log");
    expect(existsSync(access), `${access}: the local cluster's Go module proxy log`).toBe(true);
    expect(readFileSync(access, "utf8")).toMatch(/^10\.244\.0\.\d+ .*"GET \/github\.com\/spf13\/cobra\/@v\/v1\.10\.2\.zip HTTP\/1\.1" 200 /m);
  });

  it("refuses, before any pod, a repository whose toolchain no image provides (Rust)", async () => {
    const repo = repos.get("rust-no-image")!;
    const analysis = await analysed(repo);
    expect(analysis.environment.problem).toMatch(/no image provides rust/);
    const res = await runPrimary(repo, analysis.primary_ids[0]!);
    expect(res.status).toBe(422);
    expect(JSON.stringify(await res.json())).toMatch(/no image provides rust .*CODEPLANE_ENVIRONMENT_IMAGES/);
  });

  it("refuses torch on a CPU preset, naming the preset whose image provides it", async () => {
    const repo = repos.get("py-torch-standin")!;
    const analysis = await analysed(repo);
    const res = await runPrimary(repo, analysis.primary_ids[0]!);
    expect(res.status).toBe(422);
    expect(JSON.stringify(await res.json())).toMatch(/torch.*gpu-standin/);
  });

  it("installs nothing big where the image provides torch: pip finds it already there", async () => {
    const repo = repos.get("py-torch-standin")!;
    await analysed(repo);
    const list = await (await alice.api("/v1/environments?limit=100")).json();
    const listed = list.items.find((e: { image: string }) => e.image === "codeplane-torch-standin:dev");
    expect(listed, JSON.stringify(list)).toBeDefined();
    const torchEnv = await (await alice.api(`/v1/environments/${listed.key}`)).json();
    expect(torchEnv.log).toMatch(/Requirement already satisfied: torch/);
    expect(torchEnv.log).not.toMatch(/Downloading torch/);
  });

  it("restores an environment it has built into the next run of the same key, without building it again", async () => {
    const repo = repos.get("node-cli-lock")!;
    const analysis = await analysed(repo);
    const before = (await (await alice.api(`/v1/environments/${analysis.environment.key}`)).json()) as { completed_at: string };
    const res = await runPrimary(repo, analysis.primary_ids[0]!);
    const run = await finished((await res.json()).run_id);
    expect(run.status, run.error).toBe("completed");
    expect(run.environment).toMatchObject({ key: analysis.environment.key, cache: "hit" });
    await stdout(run.run_id);
    expectWholeTimeline(await (await alice.api(`/v1/runs/${run.run_id}`)).json());
    const after = await (await alice.api(`/v1/environments/${analysis.environment.key}`)).json();
    expect(after.completed_at).toBe(before.completed_at);
    expect(await stdout(run.run_id)).toMatch(/todo-digest: \d+ open/);
    // The install's output is the user's: the build it reuses, step by step, and stdout stays the command's.
    const setup = await (await alice.api(`/v1/runs/${run.run_id}/logs/setup`)).json();
    expect(setup).toMatchObject({ environment_key: analysis.environment.key, status: "ready" });
    expect(setup.content).toMatch(/==> \[1\/1\] npm ci/);
    expect(await stdout(run.run_id)).not.toMatch(/==> \[1\/1\]/);
  });
});
