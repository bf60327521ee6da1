// Environment benchmark: `make bench-environments` (needs a cluster with its catalog images and
// package mirror: `make cluster-up images`).
//
// A real repository of the runnable corpus (BENCH_REPO, default node-cli-lock: a Node CLI with a
// package-lock.json) is published, analysed and run:
//   1. The first run of its environment: the environment phase is the build (the Job's checkout and
//      install through the mirror, then the archive stored) plus the restore into the run's pod.
//      This is the baseline: what every run paid before environments were cached.
//   2. BENCH_RUNS (5) later runs of the same key: the environment phase is the restore alone.
//   The ratio is the median later phase over the first; the goal is at most 10% (or under 3 s).
//   3. A commit that changes only code keeps the key (no build); one that changes the lockfile
//      gets a new key (one build).
//   4. BENCH_CONCURRENT (10) runs submitted at once for a new key: how many build Jobs were made.
// Phases are read from the cluster (the build Job's and the restore container's start and end),
// not from this process's clock. Figures go to $BENCH_JSON when it is set.
import { execFile as execFileCb } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import * as k8s from "@kubernetes/client-node";
import { mirrorSettings } from "../test/helpers/mirror.ts";
import { median, NODE_ADDRESS, startClusterBench, writeBenchJson } from "./lib.ts";

const execFile = promisify(execFileCb);
const root = path.join(import.meta.dirname, "..");
const REPO = process.env.BENCH_REPO ?? "node-cli-lock";
const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const CONCURRENT = Number(process.env.BENCH_CONCURRENT ?? 10);
/** The lockfile or manifest the benchmark changes, the first that the repository has. */
const MANIFESTS = ["package-lock.json", "pnpm-lock.yaml", "uv.lock", "requirements.txt", "pyproject.toml", "go.sum"];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`.padStart(9);

const catalog = (await execFile("node", [path.join(root, "hack/cluster/catalog.mjs")])).stdout.trim();
const mirror = mirrorSettings(NODE_ADDRESS);
const bench = await startClusterBench({
  CODEPLANE_ENVIRONMENT_IMAGES: catalog,
  CODEPLANE_RUN_EGRESS_ALLOW: mirror.egressAllow,
  CODEPLANE_RUN_PREPROCESS_ENV: JSON.stringify(mirror.preprocessEnv),
});
const core = bench.kc.makeApiClient(k8s.CoreV1Api);
const batch = bench.kc.makeApiClient(k8s.BatchV1Api);
const work = mkdtempSync(path.join(tmpdir(), "cp-bench-env-"));

try {
  // The repository as published: one commit, then one that changes only code, then one that changes the lockfile.
  const dir = path.join(work, "repo");
  cpSync(path.join(root, "test/fixtures/runnable", REPO), dir, { recursive: true });
  const git = (...args: string[]) => execFile("git", ["-c", "user.name=Bench", "-c", "user.email=bench@example.com", ...args], { cwd: dir });
  await git("init", "-q", "-b", "main");
  await git("add", "-A");
  await git("commit", "-q", "-m", "as published");
  const first = (await git("rev-parse", "HEAD")).stdout.trim();
  writeFileSync(path.join(dir, "README.md"), readFileSync(path.join(dir, "README.md"), "utf8") + "\nA line of docs.\n");
  await git("commit", "-q", "-am", "docs only");
  const codeOnly = (await git("rev-parse", "HEAD")).stdout.trim();
  // A change to the first manifest that keeps it valid: JSON laid out anew, or a comment line.
  const manifest = MANIFESTS.find((m) => existsSync(path.join(dir, m)));
  if (!manifest) throw new Error(`${REPO} has none of ${MANIFESTS.join(", ")}`);
  const text = readFileSync(path.join(dir, manifest), "utf8");
  writeFileSync(
    path.join(dir, manifest),
    manifest.endsWith(".json") ? JSON.stringify(JSON.parse(text), null, 1) + "\n" : `${text}\n# changed by the benchmark\n`,
  );
  await git("commit", "-q", "-am", "lockfile changed");
  const lockChanged = (await git("rev-parse", "HEAD")).stdout.trim();
  await execFile("git", ["clone", "-q", "--bare", dir, `${dir}.git`]);
  const url = (await execFile(path.join(root, "hack/cluster/git-publish.sh"), [`${dir}.git`, `bench-env-${bench.namespace}`])).stdout.trim().split("\n").pop()!;
  const repo = (await bench.api("/v1/repositories", { url, name: REPO })) as { id: string };

  const analyse = async (commit: string) => {
    await bench.api(`/v1/repositories/${repo.id}/analysis/${commit}`, {});
    for (;;) {
      const a = (await bench.api(`/v1/repositories/${repo.id}/analysis/${commit}`)) as {
        status: string;
        primary_ids: string[];
        environment: { key: string };
        error: string;
      };
      if (a.status === "completed") return a;
      if (a.status === "failed") throw new Error(`analysis failed: ${a.error}`);
      await sleep(500);
    }
  };
  const run = async (commit: string, experiment: string) =>
    ((await bench.api(`/v1/repositories/${repo.id}/${commit}/runs`, { analyzed_experiment: experiment })) as { run_id: string }).run_id;
  const finished = async (runId: string) => {
    for (;;) {
      const r = (await bench.api(`/v1/runs/${runId}`)) as { status: string; error: string; environment: { key: string; cache: string } };
      if (["completed", "failed", "cancelled"].includes(r.status)) {
        if (r.status !== "completed") throw new Error(`run ${runId} ${r.status}: ${r.error}`);
        return r;
      }
      await sleep(500);
    }
  };
  /** The restore's own measure (fetch and unpack), from the environment container's log: the pod's timestamps have whole seconds only. */
  const restoreMs = async (runId: string) => {
    const pods = await core.listNamespacedPod({ namespace: bench.namespace, labelSelector: `codeplane.dev/run=${runId}` });
    const name = pods.items[0]?.metadata?.name;
    if (!name) throw new Error(`run ${runId}: no pod`);
    const log = await core.readNamespacedPodLog({ name, namespace: bench.namespace, container: "environment" });
    const m = /restored the environment: [0-9.]+ MiB in ([0-9.]+) s/.exec(log);
    if (!m) throw new Error(`run ${runId}: the environment container did not say how long it took:\n${log}`);
    return Number(m[1]) * 1000;
  };
  /** The build Job's start to completion (checkout, install, archive stored), from the Job's status. */
  const buildJobs = async () => (await batch.listNamespacedJob({ namespace: bench.namespace, labelSelector: "app.kubernetes.io/component=environment" })).items;
  const buildMs = (job: k8s.V1Job) => new Date(job.status!.completionTime!).getTime() - new Date(job.status!.startTime!).getTime();

  const analysis = await analyse(first);
  const primary = analysis.primary_ids[0]!;
  const firstId = await run(first, primary);
  const firstRun = await finished(firstId);
  const jobs = await buildJobs();
  if (jobs.length !== 1 || !jobs[0]!.status?.completionTime) throw new Error(`expected one finished build Job, found ${jobs.length}`);
  const firstBuild = buildMs(jobs[0]!);
  const firstPhase = firstBuild + (await restoreMs(firstId));

  const later: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const id = await run(first, primary);
    const r = await finished(id);
    if (r.environment.cache !== "hit") throw new Error(`run ${id} was not a cache hit: ${JSON.stringify(r.environment)}`);
    later.push(await restoreMs(id));
  }
  const hit = median(later);

  const codeOnlyKey = (await analyse(codeOnly)).environment.key;
  const lockKey = (await analyse(lockChanged)).environment.key;
  // A new key, asked for by many runs at once: one build. Its build Jobs are counted by name while the
  // runs go on (a finished Job may be gone by the end, its TTL passed), as those annotated with the key.
  const seen = new Set<string>();
  const look = async () => {
    for (const j of await buildJobs()) if (j.metadata?.annotations?.["codeplane.dev/environment-key"] === lockKey) seen.add(j.metadata.name!);
  };
  let bursting = true;
  const watching = (async () => {
    while (bursting) {
      await look();
      await sleep(500);
    }
  })();
  const burst = await Promise.all(Array.from({ length: CONCURRENT }, () => run(lockChanged, primary)));
  await Promise.all(burst.map(finished));
  bursting = false;
  await watching;
  await look();
  const concurrentBuilds = seen.size;

  const ratio = hit / firstPhase;
  process.stdout.write(
    [
      `environment phase of ${REPO} (${firstRun.environment.key.slice(0, 12)}), from the cluster's own timestamps:`,
      `  first run (build + restore)   ${s(firstPhase)}   (build Job ${s(firstBuild).trim()})   <- baseline: every run before caching`,
      `  later runs (restore, median)  ${s(hit)}   of ${RUNS}: ${later.map((x) => s(x).trim()).join(", ")}`,
      `  ratio later / first           ${(ratio * 100).toFixed(1)}%   (goal: <= 10% or under 3 s: ${ratio <= 0.1 || hit < 3000 ? "met" : "NOT met"})`,
      `  a commit changing only docs   ${codeOnlyKey === firstRun.environment.key ? "same key: no build" : "NEW KEY (wrong)"}`,
      `  a commit changing ${manifest}: ${lockKey !== firstRun.environment.key ? "new key" : "SAME KEY (wrong)"}; ${CONCURRENT} concurrent runs of it made ${concurrentBuilds} build Job(s)`,
      "",
    ].join("\n"),
  );
  writeBenchJson("environments", {
    repository: REPO,
    first_phase_ms: firstPhase,
    first_build_ms: firstBuild,
    later_restore_ms: later,
    later_median_ms: hit,
    ratio,
    code_only_same_key: codeOnlyKey === firstRun.environment.key,
    lockfile_new_key: lockKey !== firstRun.environment.key,
    concurrent_runs: CONCURRENT,
    concurrent_builds: concurrentBuilds,
  });
} finally {
  await bench.close();
  rmSync(work, { recursive: true, force: true });
  rmSync(`${path.join(work, "repo")}.git`, { recursive: true, force: true });
}
