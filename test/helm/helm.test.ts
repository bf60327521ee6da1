import { execFile as execFileCb, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import * as k8s from "@kubernetes/client-node";
import pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.ts";
import { planInstall } from "../../src/k8s/install.ts";
import { describeError, NODE_ADDRESS, until } from "../helpers/cluster.ts";
import { startPostgres, type PostgresServer } from "../helpers/postgres-server.ts";
import { sseClient } from "../helpers/sse-client.ts";
import { steadyLoad } from "./load.ts";
import { appendToHelmInstall, readHelmReadme, substitute } from "./readme.ts";
import { freePort } from "../helpers/free-port.ts";
import { saveDiagnostics } from "../helpers/pod-diagnostics.ts";

// The Helm chart from this checkout, installed into the local cluster the way
// docs/operators/helm.md tells a platform team to, and used as they would: one
// release (that page names: release and namespace `codeplane`, runs in `codeplane-runs`)
// through install, helm test, a streamed run, an upgrade under load, a
// failover and the uninstall, in this order. Postgres is a throw-away server
// on this machine listening on the node address, where the pods reach it.

const execFile = promisify(execFileCb);
const root = new URL("../..", import.meta.url).pathname;
const KUBECONFIG = `${root}.cluster/kubeconfig`;
// kubectl caches API discovery per server address under ~/.kube/cache for hours: a cluster booted
// again on the same address was answered from an earlier one's ("no resource type codeplane").
const KUBECACHEDIR = mkdtempSync(path.join(tmpdir(), "codeplane-kubecache-"));
const KUBECTL = `${root}.cluster/bin/kubectl`;
const RELEASE = "codeplane";
const NS = "codeplane";
const RUN_NS = "codeplane-runs";
/** Marks the release namespace as this suite's, so a leftover from an aborted run may be removed. */
const SUITE_LABEL = ["codeplane.dev/test-suite", "helm-e2e"] as const;
const POD_CIDR = process.env.CODEPLANE_TEST_POD_CIDR || "10.244.0.0/24";
const FIXTURE = "helm-e2e";
const RUN_LINES = 160; // printed every 0.25 s: 40 s, longer than the rollout
const CRDS = ["runs.codeplane.dev", "analyses.codeplane.dev"];
/**
 * Where a failed step saves the release's pod logs and events: $CODEPLANE_HELM_DIAGNOSTICS_DIR
 * (a CI artifact), else a folder of its own in the temp dir. Not the suite's `dir`, which
 * afterAll removes, and made only when a step fails.
 */
const DIAGNOSTICS =
  process.env.CODEPLANE_HELM_DIAGNOSTICS_DIR || path.join(tmpdir(), `codeplane-helm-diagnostics-${new Date().toISOString().replace(/[:.]/g, "-")}`);

/** The suite needs the local cluster (its node address, git daemon, crictl), not another KUBECONFIG's. */
const foreign = !!process.env.KUBECONFIG && path.resolve(process.env.KUBECONFIG) !== KUBECONFIG;
if (foreign)
  console.warn(`test/helm: skipped, KUBECONFIG=${process.env.KUBECONFIG} is not the local cluster's (${KUBECONFIG}): run make cluster-up and unset KUBECONFIG`);
const readme = readHelmReadme();
const timings: [string, number][] = [];
let suiteStart = 0;
let kc: k8s.KubeConfig;
let core: k8s.CoreV1Api;
let apps: k8s.AppsV1Api;
let coordination: k8s.CoordinationV1Api;
let postgres: PostgresServer | undefined;
let databaseUrl: string;
let dir: string;
let valuesFile: string;
let gitUrl: string;
let createdNamespace = false;
let base: string; // http://<cluster IP>:80, through kube-proxy
let key: string;
let repoId: string;
/** When the last uninstall deleted the Service (its name resolves to the old address for a while). */
let serviceDeletedAt = 0;

async function timed<T>(what: string, fn: () => Promise<T>): Promise<T> {
  const t0 = Date.now();
  try {
    return await fn();
  } finally {
    timings.push([what, Date.now() - t0]);
  }
}

/** bash -euo pipefail in the checkout; rejects with the output on failure. */
function sh(script: string, timeoutMs = 300_000): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn("bash", ["-euo", "pipefail", "-c", script], {
      cwd: root,
      env: { ...process.env, KUBECONFIG, KUBECACHEDIR },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (b: Buffer) => (stdout += b.toString()));
    child.stderr.on("data", (b: Buffer) => (stderr += b.toString()));
    const timer = setTimeout(() => {
      stderr += `\n(killed after ${timeoutMs} ms)`;
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {
        // already gone
      }
    }, timeoutMs);
    child.on("close", (code) => {
      clearTimeout(timer);
      if (code === 0) resolve({ stdout, stderr });
      else reject(new Error(`exit ${code}:\n--- script\n${script}\n--- stdout\n${stdout}\n--- stderr\n${stderr}`));
    });
  });
}

const kubectl = async (...args: string[]) =>
  (await execFile(KUBECTL, args, { env: { ...process.env, KUBECONFIG, KUBECACHEDIR }, maxBuffer: 64 * 1024 * 1024 })).stdout;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const exists = (p: Promise<unknown>) =>
  p.then(
    () => true,
    (err: { code?: number }) => (err.code === 404 ? false : Promise.reject(err as Error)),
  );

function api(pathname: string, init: { method?: string; json?: unknown } = {}): Promise<Response> {
  return fetch(base + pathname, {
    method: init.method ?? (init.json === undefined ? "GET" : "POST"),
    headers: { authorization: `Bearer ${key}`, ...(init.json !== undefined && { "content-type": "application/json" }) },
    ...(init.json !== undefined && { body: JSON.stringify(init.json) }),
    signal: AbortSignal.timeout(30_000),
  });
}

async function startRun(command: string[]): Promise<string> {
  const res = await api(`/v1/repositories/${repoId}/main/runs`, { json: { command } });
  expect(res.status, await res.clone().text()).toBe(201);
  return ((await res.json()) as { run_id: string }).run_id;
}

async function finished(runId: string, timeoutMs = 120_000): Promise<{ status: string; exit_code: number | null; start_time: string | null }> {
  return until(`run ${runId} to end`, timeoutMs, async () => {
    const run = (await (await api(`/v1/runs/${runId}`)).json()) as { status: string; exit_code: number | null; start_time: string | null };
    return ["completed", "failed", "cancelled"].includes(run.status) ? run : undefined;
  });
}

/**
 * Follows a pod's log from now on and keeps what explains how it stopped: the
 * shutdown lines (with their step timings) and every warning or error. The log
 * is gone with the pod, so it has to be read while the pod stops.
 */
function followShutdown(pod: string): { lines: string[]; stop(): void } {
  const lines: string[] = [];
  const proc = spawn(KUBECTL, ["-n", NS, "logs", "-f", "--tail=0", pod], {
    env: { ...process.env, KUBECONFIG, KUBECACHEDIR },
    stdio: ["ignore", "pipe", "ignore"],
  });
  let partial = "";
  proc.stdout.on("data", (d: Buffer) => {
    const all = (partial + d.toString()).split("\n");
    partial = all.pop()!;
    for (const l of all) {
      const entry = ((): { level?: number; msg?: string } => {
        try {
          return JSON.parse(l) as { level?: number; msg?: string };
        } catch {
          return { level: 50, msg: l };
        }
      })();
      if ((entry.level ?? 0) >= 40 || /shutting down|service closed|^stopped$|shutdown/.test(entry.msg ?? "")) lines.push(l);
    }
  });
  return { lines, stop: () => proc.kill() };
}

async function apiPods(): Promise<k8s.V1Pod[]> {
  const pods = await core.listNamespacedPod({ namespace: NS, labelSelector: `app.kubernetes.io/name=codeplane,app.kubernetes.io/instance=${RELEASE}` });
  return pods.items;
}
const isReady = (p: k8s.V1Pod) => !p.metadata?.deletionTimestamp && p.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True");

/** The Service's cluster IP (a new one for each install) and the bootstrap key, read back as the README does. */
async function connect(): Promise<void> {
  const svc = await core.readNamespacedService({ name: "codeplane", namespace: NS });
  base = `http://${svc.spec!.clusterIP}:80`;
  const secret = await core.readNamespacedSecret({ name: "codeplane-bootstrap", namespace: NS });
  key = Buffer.from(secret.data!.CODEPLANE_BOOTSTRAP_API_KEY!, "base64").toString();
  // A new Service answers once kube-proxy has written its rules (its sync runs at most once a second);
  // until then the node refuses the connection (hack/cluster/up.sh: untranslated Service addresses).
  const t0 = Date.now();
  const attempts: string[] = [];
  const at = () => `+${((Date.now() - t0) / 1000).toFixed(2)} s`;
  const ready = async () => {
    try {
      const res = await fetch(`${base}/readyz`, { signal: AbortSignal.timeout(5_000) });
      if (!res.ok) attempts.push(`${at()} ${res.status} ${(await res.text()).slice(0, 200)}`);
      return res.ok;
    } catch (err) {
      attempts.push(`${at()} ${describeError(err)}`);
      throw err;
    }
  };
  // What each failed attempt met (collapsed when it repeats), for the log of a slow or failed connect.
  const tried = () =>
    attempts
      .filter((a, i) => i === 0 || a.replace(/^\S+ s /, "") !== attempts[i - 1]!.replace(/^\S+ s /, ""))
      .slice(0, 20)
      .join("\n  ");
  try {
    await until(`${base}/readyz`, 60_000, ready);
    if (Date.now() - t0 > 10_000)
      console.log(
        `connect: ${base} answered after ${((Date.now() - t0) / 1000).toFixed(1)} s; attempts:\n  ${tried()}\nthe cluster then:\n${await clusterView()}`,
      );
  } catch (err) {
    console.log(`connect: ${base} did not answer; attempts:\n  ${tried()}\nwhat the cluster shows:\n${await clusterView()}`);
    throw err;
  }
}

/** The release's pods (ready, restarts, IP), the Service's endpoints and the pods' last log lines: what a failed connect needs. */
async function clusterView(): Promise<string> {
  const out: string[] = [];
  const run = async (...args: string[]) => out.push(`$ kubectl ${args.join(" ")}`, await kubectl(...args).catch((e: Error) => e.message));
  await run("-n", NS, "get", "pods,endpointslices,svc", "-o", "wide");
  // The node's side (the local cluster; elsewhere these fail and say so): the Service's NAT rules and this process's connections to it.
  const ip = base.replace(/^http:\/\/|:\d+$/g, "");
  const host = async (label: string, script: string) =>
    out.push(
      `$ ${label}`,
      await sh(script, 10_000).then(
        (r) => r.stdout || "(nothing)",
        (e: Error) => e.message,
      ),
    );
  await host(`iptables-save -t nat | grep -F ${ip}`, `iptables-save -t nat | grep -F -- '${ip}' || true`);
  await host(`ss -tnp dst ${ip}`, `ss -tnp dst '${ip}'`);
  for (const pod of await apiPods()) {
    await run("-n", NS, "logs", pod.metadata!.name!, "--tail", "40");
    if ((pod.status?.containerStatuses?.[0]?.restartCount ?? 0) > 0) await run("-n", NS, "logs", pod.metadata!.name!, "--previous", "--tail", "40");
  }
  return out.join("\n");
}

/** The README's helm install command alone (its continuation lines joined). */
const helmInstallCommand = () => {
  const lines = readme.install.split("\n");
  let i = lines.findIndex((l) => l.startsWith("helm install "));
  const parts: string[] = [];
  do parts.push(lines[i]!.replace(/\\$/, "").trim());
  while (lines[i++]!.trimEnd().endsWith("\\"));
  return parts.join(" ");
};

/** Removes the release and its namespaces (only if the release namespace is this suite's). */
async function removeRelease(): Promise<void> {
  await sh(`${readme.toolsPrelude}\nhelm uninstall ${RELEASE} -n ${NS} --wait --timeout 2m || true`, 180_000).catch(() => undefined);
  for (const name of [NS, RUN_NS]) await core.deleteNamespace({ name }).catch(() => undefined);
  await until(
    "the suite's namespaces to be gone",
    180_000,
    async () => !(await exists(core.readNamespace({ name: NS }))) && !(await exists(core.readNamespace({ name: RUN_NS }))),
  );
}

/**
 * One run of this suite per cluster at a time (the release and namespace names are the
 * README's, fixed): a lock file with the holder's pid, taken over when that process is gone.
 */
const LOCK = `${root}.cluster/helm-e2e.lock`;
async function lock(): Promise<void> {
  const alive = (pid: number) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  await until("the suite's lock (another run of test/helm holds it)", 600_000, async () => {
    try {
      writeFileSync(LOCK, String(process.pid), { flag: "wx" });
      return true;
    } catch {
      const holder = Number(readFileSync(LOCK, "utf8"));
      if (!alive(holder)) rmSync(LOCK, { force: true });
      return false;
    }
  });
}
const unlock = () => {
  if (readFileSync(LOCK, "utf8") === String(process.pid)) rmSync(LOCK, { force: true });
};

/** Whether the CRDs exist without belonging to this release (applied by `codeplane install` or the e2e suites). */
async function crdsNeedAdoption(): Promise<boolean> {
  const ext = kc.makeApiClient(k8s.ApiextensionsV1Api);
  for (const name of CRDS) {
    const crd = await ext.readCustomResourceDefinition({ name }).catch(() => null);
    if (crd && crd.metadata?.annotations?.["meta.helm.sh/release-name"] !== RELEASE) return true;
  }
  return false;
}

beforeAll(async () => {
  if (foreign) return;
  suiteStart = Date.now();
  // The README's prelude builds Helm on first use (hack/tools/helm.sh); timed apart.
  await timed("Helm (hack/tools/helm.sh: built on first use, cached after)", () => execFile(`${root}hack/tools/helm.sh`, [], { maxBuffer: 16 * 1024 * 1024 }));
  await lock();
  kc = new k8s.KubeConfig();
  kc.loadFromFile(KUBECONFIG);
  core = kc.makeApiClient(k8s.CoreV1Api);
  apps = kc.makeApiClient(k8s.AppsV1Api);
  coordination = kc.makeApiClient(k8s.CoordinationV1Api);

  const ns = await core.readNamespace({ name: NS }).catch(() => null);
  if (ns && ns.metadata?.labels?.[SUITE_LABEL[0]] !== SUITE_LABEL[1]) {
    throw new Error(
      `Namespace ${NS} exists and is not this suite's (no label ${SUITE_LABEL.join("=")}): remove it (helm uninstall ${RELEASE} -n ${NS}; kubectl delete namespace ${NS}) first.`,
    );
  }
  const runNs = await core.readNamespace({ name: RUN_NS }).catch(() => null);
  if (runNs && !ns && runNs.metadata?.labels?.["app.kubernetes.io/instance"] !== RELEASE) {
    throw new Error(`Namespace ${RUN_NS} exists and is not a leftover of release ${RELEASE}: remove it first.`);
  }
  if (ns || runNs) await timed("removing a previous run's release", removeRelease);

  await timed("Postgres on the node address, fixture, values", async () => {
    postgres = await startPostgres({ listen: [NODE_ADDRESS], allow: [POD_CIDR] });
    const password = randomBytes(12).toString("hex");
    const admin = new pg.Client({ connectionString: postgres.adminUrl });
    await admin.connect();
    await admin.query(`create role codeplane login password '${password}'`);
    await admin.query("create database codeplane owner codeplane");
    await admin.end();
    databaseUrl = `postgres://codeplane:${password}@${NODE_ADDRESS}:${postgres.port}/codeplane`;

    dir = mkdtempSync(path.join(tmpdir(), "codeplane-helm-"));
    const src = path.join(dir, "fixture");
    await execFile("mkdir", ["-p", src]);
    writeFileSync(path.join(src, "count.sh"), 'i=1\nwhile [ "$i" -le "$1" ]; do echo "line $i"; i=$((i + 1)); sleep "$2"; done\n');
    const published = await execFile(`${root}hack/cluster/git-publish.sh`, [src, FIXTURE]);
    gitUrl = published.stdout.trim().split("\n").pop()!;

    // What the install adds to the README's command (-f): the local images, never pulled; the
    // git daemon's repository for helm test; one key's steady load above the default rate limit.
    valuesFile = path.join(dir, "values.yaml");
    writeFileSync(
      valuesFile,
      [
        "image: { pullPolicy: Never }",
        "runnerImage: { pullPolicy: Never }",
        "replicaCount: 2",
        "config:",
        '  CODEPLANE_ALLOW_LOCAL_REPOSITORIES: "true"',
        '  CODEPLANE_RATE_LIMIT_REQUESTS: "100000"',
        "tests:",
        `  repositoryUrl: ${gitUrl}`,
        "",
      ].join("\n"),
    );
  });
}, 900_000);

afterAll(async () => {
  if (foreign) return;
  if (process.env.HELM_E2E_KEEP) {
    // For a look after a failure: the release, its namespaces and Postgres stay; the next run removes them.
    console.log(
      `HELM_E2E_KEEP: release ${RELEASE} in ${NS} and Postgres (${databaseUrl}) left running; the next run removes the release, stop Postgres with: runuser -u postgres -- pg_ctl -D ${postgres?.dataDir} stop`,
    );
  } else {
    if (createdNamespace) await timed("cleanup", () => removeRelease().catch((err) => console.error("cleanup:", err)));
    await postgres?.stop();
  }
  if (dir) rmSync(dir, { recursive: true, force: true });
  rmSync(KUBECACHEDIR, { recursive: true, force: true });
  try {
    unlock();
  } catch {
    // not held
  }
  const total = Date.now() - suiteStart;
  const width = Math.max(...timings.map(([w]) => w.length));
  console.log(
    [
      `Helm end-to-end suite: ${(total / 1000).toFixed(1)} s`,
      ...timings.map(([w, ms]) => `  ${w.padEnd(width)}  ${(ms / 1000).toFixed(1).padStart(6)} s`),
    ].join("\n"),
  );
}, 300_000);

// A failed step keeps what explains it before the next step (or the uninstall) changes the
// cluster: every pod's log in both namespaces, previous containers too, and their events.
afterEach(async (ctx) => {
  if (foreign || ctx.task.result?.state !== "fail") return;
  await saveDiagnostics({
    kubectl,
    namespaces: [NS, RUN_NS],
    folder: DIAGNOSTICS,
    step: ctx.task.name,
    log: (text) => process.stderr.write(text),
  }).catch((err: unknown) => process.stderr.write(`saving the diagnostics of "${ctx.task.name}" failed: ${describeError(err)}\n`));
}, 120_000);

describe.skipIf(foreign)("the Helm chart on the local cluster", () => {
  it("installs with the README's commands as written (database URL substituted, local values added with -f): two replicas Ready, none restarted", async () => {
    let script = substitute(readme.install, "the database URL", /^export DATABASE_URL=.*$/m, `export DATABASE_URL='${databaseUrl}'`);
    script = appendToHelmInstall(script, `-f '${valuesFile}'`);
    // The README's own checks of its text: the commands the suite runs are these.
    expect(readme.install).toMatch(/^kubectl create namespace codeplane$/m);
    expect(readme.install).toMatch(/^helm install codeplane charts\/codeplane -n codeplane \\$/m);
    expect(readme.install).toMatch(/^kubectl -n codeplane rollout status deploy\/codeplane$/m);
    // CRDs applied before by something else (codeplane install, the e2e suites) belong to no
    // release: the README's adoption commands hand them to this one.
    const adopt = await crdsNeedAdoption();
    const full = [readme.toolsPrelude, ...(adopt ? [readme.adoptCrds] : []), script].join("\n");
    console.log(`running, in ${root}:\n${full}`);
    createdNamespace = true;
    const { stdout } = await timed("install: the README's commands, helm install to rolled out", () => sh(full));
    expect(stdout).toMatch(/deployment "codeplane" successfully rolled out/);

    // The namespace is the README's plain one; from here on it enforces the restricted
    // standard, which the running pods already meet (no warning) and every later pod must.
    const labelled = await execFile(
      KUBECTL,
      [
        "label",
        "namespace",
        NS,
        `${SUITE_LABEL[0]}=${SUITE_LABEL[1]}`,
        "pod-security.kubernetes.io/enforce=restricted",
        "pod-security.kubernetes.io/enforce-version=latest",
      ],
      { env: { ...process.env, KUBECONFIG } },
    );
    expect(labelled.stderr).toBe("");

    const deployment = await apps.readNamespacedDeployment({ name: "codeplane", namespace: NS });
    expect(deployment.spec?.replicas).toBe(2);
    expect(deployment.status?.readyReplicas).toBe(2);
    const container = deployment.spec!.template.spec!.containers[0]!;
    expect(container).toMatchObject({ image: "docker.io/library/codeplane:dev", imagePullPolicy: "Never" });
    const env = Object.fromEntries(container.env!.map((e) => [e.name, e.value]));
    expect(env).toMatchObject({
      CODEPLANE_RUNNER_IMAGE: "docker.io/library/codeplane-runner:dev",
      CODEPLANE_IMAGE_PULL_POLICY: "Never",
      CODEPLANE_NAMESPACE: RUN_NS,
    });
    const pods = await apiPods();
    expect(pods.filter(isReady)).toHaveLength(2);
    // Two replicas starting together on an empty database: neither may crash (a bootstrap race once did).
    expect(pods.map((p) => `${p.metadata!.name}: ${p.status!.containerStatuses![0]!.restartCount} restarts`)).toEqual(
      pods.map((p) => `${p.metadata!.name}: 0 restarts`),
    );

    await connect();
  });

  it("answers through the README's port-forward with the bootstrap key read back from its Secret", async () => {
    const port = await freePort();
    let access = substitute(readme.access, "the local port", "8080:80", `${port}:80`);
    access = substitute(access, "the local port", "localhost:8080", `localhost:${port}`);
    // A person types the next command after the port-forward has started; a script waits for it.
    access = substitute(
      access,
      "waiting for the port-forward",
      /^(kubectl .*port-forward .*&)$/m,
      `$1\nuntil curl -s -o /dev/null localhost:${port}/healthz; do sleep 0.2; done`,
    );
    const { stdout, stderr } = await timed("README: port-forward, key, first request", () =>
      sh(`trap 'kill $(jobs -p) 2>/dev/null' EXIT\n${readme.toolsPrelude}\n${access}`, 60_000),
    );
    expect(stdout).toContain('{"items":[],"next_cursor":null}');
    expect(stderr).toContain(`No resources found in ${RUN_NS} namespace.`);
  });

  it("passes helm test: a pod under the restricted standard reaches /readyz through the Service and runs a repository's command to its end", async () => {
    const { stdout, stderr } = await timed("helm test (readyz and a run to its end)", () =>
      sh(`${readme.toolsPrelude}\nhelm test ${RELEASE} -n ${NS} --timeout 5m`),
    );
    // Helm prints the hook's log (hook-output-log-policy) on stderr.
    console.log(stderr);
    expect(stdout).toMatch(/TEST SUITE:\s+codeplane-test[\s\S]*Phase:\s+Succeeded/);
    expect(stderr).toMatch(/\[helm test\] GET http:\/\/codeplane\.codeplane\.svc:80\/readyz: 200/);
    expect(stderr).toMatch(/\[helm test\] stdout: codeplane helm test codeplane-test/);
    expect(stderr).toMatch(/\[helm test\] ok: ready, and run \S+ completed with exit code 0/);
    // hook-succeeded: nothing left behind.
    expect(await exists(core.readNamespacedPod({ name: "codeplane-test", namespace: NS }))).toBe(false);
  });

  it("streams a run through the Service's cluster IP (kube-proxy) to a real SSE client, which ends with the run's exit code", async () => {
    const registered = await api("/v1/repositories", { json: { url: gitUrl, name: FIXTURE } });
    if (registered.status === 201) {
      repoId = ((await registered.json()) as { id: string }).id;
    } else {
      // helm test registered the same URL (under its own name) for the same account.
      expect(registered.status, await registered.clone().text()).toBe(409);
      const page = (await (await api("/v1/repositories?limit=100")).json()) as { items: { id: string; url: string }[] };
      repoId = page.items.find((r) => r.url === gitUrl)!.id;
    }
    await timed("a run streamed through the Service", async () => {
      const runId = await startRun(["sh", "-c", "echo one; echo two >&2; sleep 1; echo three; exit 3"]);
      const stream = sseClient(`${base}/v1/runs/${runId}/logs/stream`, key);
      await Promise.race([stream.ended, sleep(120_000).then(() => Promise.reject(new Error(`no end: ${JSON.stringify(stream.events)}`)))]);
      expect(stream.lines.map((e) => [e.type, e.data.line])).toEqual([
        ["stdout", "one"],
        ["stderr", "two"],
        ["stdout", "three"],
      ]);
      expect(stream.events.at(-1)).toEqual({ type: "end", data: { status: "failed", exit_code: 3 } });
      expect(await finished(runId)).toMatchObject({ status: "failed", exit_code: 3 });
    });
  });

  it("confines runs by the workload NetworkPolicy the pods applied at start (what `codeplane install` builds from their settings): a run checks out through the git port and cannot reach Postgres on the node address", async () => {
    // The chart renders no workload policy (docs/decisions/0100-network-policy-one-author.md): the pods made this one.
    const networking = kc.makeApiClient(k8s.NetworkingV1Api);
    const applied = await networking.readNamespacedNetworkPolicy({ name: "codeplane-workloads", namespace: RUN_NS });
    expect(applied.metadata?.annotations?.["meta.helm.sh/release-name"]).toBeUndefined();
    const container = (await apps.readNamespacedDeployment({ name: "codeplane", namespace: NS })).spec!.template.spec!.containers[0]!;
    const env = Object.fromEntries(container.env!.map((e) => [e.name, e.value]));
    const config = loadConfig({ ...env, DATABASE_URL: databaseUrl, CODEPLANE_ENCRYPTION_KEY: randomBytes(32).toString("base64") });
    expect(applied.spec).toEqual(planInstall(config).networkPolicy.spec);
    // Postgres listens on the node address for the API pods; a run pod may not connect there. Exit 0: closed, 3: open.
    const probe = `const s = require("node:net").connect(${postgres!.port}, "${NODE_ADDRESS}");
s.setTimeout(5000, () => process.exit(0));
s.on("error", () => process.exit(0));
s.on("connect", () => process.exit(3));`;
    const runId = await timed("a run probing Postgres from the run namespace", () => startRun(["node", "-e", probe]));
    expect(await finished(runId)).toMatchObject({ status: "completed", exit_code: 0 });
  });

  it("rolls a changed setting with the README's helm upgrade under 20 requests/s: no request fails, old pods stop promptly, and a run started before keeps every line", async () => {
    const runId = await startRun(["sh", "count.sh", String(RUN_LINES), "0.25"]);
    const stream = sseClient(`${base}/v1/runs/${runId}/logs/stream`, key);
    let connections = 0;
    stream.es.addEventListener("open", () => connections++);
    await until("the run's first line", 120_000, async () => stream.lines.length > 0);
    const before = (await apiPods()).map((p) => p.metadata!.name!);
    const shutdownLogs = new Map(before.map((name) => [name, followShutdown(name)] as const));

    // How long each old pod takes to stop, from the deletion request (deletionTimestamp is that plus the grace period).
    const stopping = new Map<string, { deleted: number; gone?: number }>();
    let watching = true;
    const watcher = (async () => {
      while (watching) {
        const pods = await apiPods().catch(() => null);
        for (const p of pods ?? []) {
          const m = p.metadata!;
          if (before.includes(m.name!) && m.deletionTimestamp && !stopping.has(m.name!)) {
            stopping.set(m.name!, { deleted: new Date(m.deletionTimestamp).getTime() - (m.deletionGracePeriodSeconds ?? 0) * 1000 });
          }
        }
        for (const [name, st] of stopping) if (pods && !st.gone && !pods.some((p) => p.metadata!.name === name)) st.gone = Date.now();
        await sleep(250);
      }
    })();

    const load = steadyLoad(`${base}/v1/repositories`, key, 20);
    const t0 = Date.now();
    let rolledOut: number;
    let oldGone: number;
    let stopped: ReturnType<typeof load.stop> | undefined;
    try {
      const upgrade = `${readme.upgrade} --set config.CODEPLANE_GIT_REFRESH_SECONDS=30`;
      expect(readme.upgrade).toBe("helm upgrade codeplane charts/codeplane -n codeplane --reuse-values");
      await sh(`${readme.toolsPrelude}\n${upgrade}\nkubectl -n ${NS} rollout status deploy/codeplane --timeout=3m`);
      rolledOut = Date.now() - t0;
      await until("the old pods to be gone", 120_000, async () => before.every((name) => stopping.get(name)?.gone));
      oldGone = Date.now() - t0;
      await sleep(2_000);
    } finally {
      watching = false;
      await watcher;
      stopped = load.stop();
      for (const f of shutdownLogs.values()) f.stop();
    }
    const result = await stopped;
    timings.push(["upgrade: helm upgrade to rolled out", rolledOut], ["upgrade: to the old pods gone", oldGone]);
    const stopTimes = [...stopping].map(([name, s]) => `${name} ${s.gone ? ((s.gone - s.deleted) / 1000).toFixed(1) : "?"} s`);
    console.log(
      `upgrade: rolled out in ${(rolledOut / 1000).toFixed(1)} s, old pods gone after ${(oldGone / 1000).toFixed(1)} s (each stopped in: ${stopTimes.join(", ")}); ` +
        `${result.sent} requests in ${(result.durationMs / 1000).toFixed(1)} s, ${result.ok} ok, ${result.failures.length} failed, ${result.retried.length} sent again after their kept-alive connection was closed under them ${JSON.stringify(result.retried)}`,
    );
    for (const [name, f] of shutdownLogs) console.log(`upgrade: how ${name} stopped:\n  ${f.lines.join("\n  ")}`);
    expect(result.failures, `failed requests during the rollout (of ${result.sent})`).toEqual([]);
    expect(result.ok).toBeGreaterThan(15 * (result.durationMs / 1000));
    // An old pod stops within its preStop sleep and a few seconds, not at the end of its shutdown
    // timeout (25 s), which would mean a connection kept it busy until it was cut.
    expect(stopping.size).toBe(before.length);
    for (const [name, s] of stopping) expect(s.gone! - s.deleted, `${name} took ${s.gone! - s.deleted} ms to stop`).toBeLessThan(20_000);

    const pods = await apiPods();
    expect(pods.filter(isReady)).toHaveLength(2);
    for (const p of pods) expect(p.spec!.containers[0]!.env!.find((e) => e.name === "CODEPLANE_GIT_REFRESH_SECONDS")?.value).toBe("30");

    await Promise.race([stream.ended, sleep(120_000).then(() => Promise.reject(new Error(`no end after ${stream.lines.length} lines`)))]);
    const expected = Array.from({ length: RUN_LINES }, (_, i) => `line ${i + 1}`);
    // Streamed across the rollout (the client reconnects with Last-Event-ID when its pod stops)...
    expect(stream.lines.map((e) => e.data.line)).toEqual(expected);
    expect(stream.events.at(-1)).toEqual({ type: "end", data: { status: "completed", exit_code: 0 } });
    // Both pods it could have been connected to stopped meanwhile.
    console.log(`upgrade: the live run's stream connected ${connections} times`);
    expect(connections).toBeGreaterThanOrEqual(2);
    // ...and stored: the controller that followed the pod's log changed with the Lease holder.
    await until("the stored log to be complete", 30_000, async () => {
      const stdout = (await (await api(`/v1/runs/${runId}/logs/stdout`)).json()) as { content: string };
      return stdout.content === `${expected.join("\n")}\n`;
    });
  });

  it("fails over when the Lease holder's process is SIGKILLed: another process leads within 15 s, and a run submitted then completes", async () => {
    const leases = await coordination.listNamespacedLease({ namespace: RUN_NS });
    const lease = leases.items.find((l) => l.metadata!.name!.startsWith("codeplane-controller-"));
    expect(lease, `Leases in ${RUN_NS}: ${leases.items.map((l) => l.metadata!.name).join(", ")}`).toBeDefined();
    const leaseName = lease!.metadata!.name!;
    const pods = (await apiPods()).filter(isReady).map((p) => p.metadata!.name!);
    expect(pods).toHaveLength(2);
    // holderIdentity is <hostname = pod name>-<pid>-<random>.
    const holderOf = (identity: string | null | undefined) => pods.find((p) => identity?.startsWith(`${p}-`));
    const leader = holderOf(lease!.spec!.holderIdentity);
    expect(leader, `holder ${lease!.spec!.holderIdentity}`).toBeDefined();
    const other = pods.find((p) => p !== leader)!;

    const crictl = async (...args: string[]) => (await execFile(`${root}.cluster/bin/crictl`, args)).stdout.trim();
    const sandbox = await crictl("pods", "--namespace", NS, "--name", `^${leader}$`, "--state", "ready", "-q");
    const container = await crictl("ps", "--pod", sandbox, "--name", "^codeplane$", "--state", "running", "-q");
    const pid = (JSON.parse(await crictl("inspect", container)) as { info: { pid: number } }).info.pid;
    expect(pid).toBeGreaterThan(1);

    const killedAt = Date.now();
    process.kill(pid, "SIGKILL");
    // Submitted at that moment, through the Service: a connection the dead pod refuses never
    // reached it, so the client tries again (no request is repeated that was received).
    const runId = await until("the run to be accepted", 30_000, () =>
      startRun(["sh", "-c", "echo after the failover"]).catch((err: Error) => {
        if (/fetch failed|ECONNREFUSED|ECONNRESET|other side closed/.test(`${err.message} ${String(err.cause)}`)) return undefined;
        throw err;
      }),
    );
    const submittedAfter = Date.now() - killedAt;
    // The next holder: the other replica, or the killed container restarted by the kubelet
    // (a new process, a new identity), whichever takes the expired Lease first.
    let ledAt = 0;
    let next = "";
    for (let deadline = killedAt + 30_000; Date.now() < deadline && !ledAt; await sleep(100)) {
      const holder = (await coordination.readNamespacedLease({ name: leaseName, namespace: RUN_NS })).spec?.holderIdentity;
      if (holder && holder !== lease!.spec!.holderIdentity) [ledAt, next] = [Date.now(), holder];
    }
    const handover = ledAt - killedAt;
    const who = holderOf(next) === other ? `the other replica, ${other}` : `${leader}'s restarted container`;
    timings.push(["failover: SIGKILL to another process leading", handover]);
    console.log(
      `failover: ${leader}'s process killed; ${ledAt ? `${who} leads after ${(handover / 1000).toFixed(1)} s` : "nobody leads"} (lease ${lease!.spec!.leaseDurationSeconds} s); run submitted ${(submittedAfter / 1000).toFixed(1)} s after the kill`,
    );
    expect(ledAt, `nobody took the Lease ${leaseName} from ${lease!.spec!.holderIdentity}`).toBeGreaterThan(0);
    expect(handover, `${who} led ${handover} ms after the SIGKILL`).toBeLessThan(15_000);

    const run = await finished(runId, 120_000);
    expect(run).toMatchObject({ status: "completed", exit_code: 0 });
    console.log(`failover: the run submitted then started ${((Date.parse(run.start_time!) - killedAt) / 1000).toFixed(1)} s after the kill`);
    await until(
      "its output",
      30_000,
      async () => ((await (await api(`/v1/runs/${runId}/logs/stdout`)).json()) as { content: string }).content === "after the failover\n",
    );
    // The killed container restarts in place and serves again (as a candidate).
    await until("the killed pod to be Ready again", 60_000, async () => {
      const p = (await apiPods()).find((x) => x.metadata!.name === leader);
      return p && isReady(p) && p.status!.containerStatuses![0]!.restartCount === 1;
    });
  });

  it("uninstalls with the README's command, leaving exactly what the README lists: the CRDs, the release namespace with the Secrets made for it, Postgres", async () => {
    const leaves = readme.uninstallLeaves;
    expect(readme.uninstall).toBe("helm uninstall codeplane -n codeplane");
    expect(leaves).toContain(
      "the run namespace `codeplane-runs` with everything in it: Runs, Analyses, Jobs and pods, per-workload Secrets, Events and the Lease",
    );
    expect(leaves).toContain("Their rows and logs stay in Postgres");
    expect(leaves).toContain("the CRDs (`crds.keep`, default `true`)");
    expect(leaves).toContain(
      "the release namespace and the Secrets you created in it (database, encryption key, bootstrap key, pull secrets); Postgres and its data",
    );

    await timed("uninstall: to the run namespace gone", async () => {
      await sh(`${readme.toolsPrelude}\n${readme.uninstall}`);
      serviceDeletedAt = Date.now();
      await until("the run namespace to be gone", 180_000, async () => !(await exists(core.readNamespace({ name: RUN_NS }))));
      await until("the API pods to be gone", 120_000, async () => (await apiPods()).length === 0);
    });
    expect((await sh(`${readme.toolsPrelude}\nhelm list -n ${NS} -a -q`)).stdout.trim()).toBe("");

    // Everything left in the release namespace (Events aside: the cluster's records of what happened).
    const namespaced = (await kubectl("api-resources", "--verbs=list", "--namespaced", "-o", "name"))
      .split("\n")
      .filter((r) => r && !/^events(\.events\.k8s\.io)?$/.test(r));
    const listed = async (args: string[]) =>
      (
        JSON.parse(await kubectl("get", namespaced.join(","), ...args, "-o", "json")) as {
          items: { kind: string; metadata: { name: string; namespace?: string } }[];
        }
      ).items;
    await until("only what the README lists in the release namespace", 60_000, async () => {
      const left = (await listed(["-n", NS])).map((o) => `${o.kind}/${o.metadata.name}`).sort();
      // Made by Kubernetes for every namespace: ConfigMap kube-root-ca.crt, ServiceAccount default.
      const expected = ["ConfigMap/kube-root-ca.crt", "Secret/codeplane-bootstrap", "Secret/codeplane-db", "Secret/codeplane-keys", "ServiceAccount/default"];
      if (JSON.stringify(left) !== JSON.stringify(expected)) throw new Error(`left: ${left.join(", ")}`);
      return true;
    });
    // Nothing of the release anywhere else, but the CRDs, kept.
    expect((await listed(["-A", "-l", `app.kubernetes.io/instance=${RELEASE}`])).map((o) => `${o.kind}/${o.metadata.namespace}/${o.metadata.name}`)).toEqual(
      [],
    );
    const clusterWide = (await kubectl("api-resources", "--verbs=list", "--namespaced=false", "-o", "name")).split("\n").filter(Boolean);
    const global = (
      JSON.parse(await kubectl("get", clusterWide.join(","), "-l", `app.kubernetes.io/instance=${RELEASE}`, "-o", "json")) as {
        items: { kind: string; metadata: { name: string; annotations?: Record<string, string> } }[];
      }
    ).items;
    expect(global.map((o) => `${o.kind}/${o.metadata.name}`).sort()).toEqual(CRDS.map((c) => `CustomResourceDefinition/${c}`).sort());
    for (const crd of global) expect(crd.metadata.annotations?.["helm.sh/resource-policy"]).toBe("keep");
    // No Lease left, held or not: it went with the run namespace.
    const leases = await coordination.listLeaseForAllNamespaces();
    expect(
      leases.items
        .filter((l) => l.metadata!.name!.startsWith("codeplane-controller-"))
        .map((l) => `${l.metadata!.namespace}/${l.metadata!.name} held by ${l.spec!.holderIdentity}`),
    ).toEqual([]);
    // Rows and logs stay in Postgres.
    const admin = new pg.Client({ connectionString: postgres!.urlFor("codeplane") });
    await admin.connect();
    const { rows } = await admin.query<{ runs: string; lines: string }>(
      "select (select count(*) from runs) as runs, (select count(*) from run_log_lines) as lines",
    );
    await admin.end();
    expect(Number(rows[0]!.runs)).toBeGreaterThanOrEqual(4);
    expect(Number(rows[0]!.lines)).toBeGreaterThanOrEqual(RUN_LINES);
  });
  it("with runNamespace.keep, uninstall leaves the run namespace as the README lists (its Lease held by a pod that is gone until it expires), and a later install adopts it and reconciles what it finds", async () => {
    // The same database and Secrets as the release above; one replica is enough here.
    const install = `${helmInstallCommand()} -f '${valuesFile}' --set replicaCount=1 --set runNamespace.keep=true\nkubectl -n ${NS} rollout status deploy/codeplane`;
    await timed("keep: install", () => sh(`${readme.toolsPrelude}\n${install}`));
    await connect();
    // Cluster DNS keeps answering a Service's old address for its TTL (CoreDNS: ttl 30 and cache 30,
    // as kubeadm configures it): a run's checkout in that window connects to an address nobody
    // serves. Wait it out, as the README tells whoever reinstalls at once.
    await sleep(Math.max(0, serviceDeletedAt + 31_000 - Date.now()));
    const runId = await startRun(["sleep", "600"]);
    await until("the run to be running", 120_000, async () => ((await (await api(`/v1/runs/${runId}`)).json()) as { status: string }).status === "running");
    const [pod] = await apiPods();
    const holder = pod!.metadata!.name!;

    await timed("keep: uninstall", async () => {
      await sh(`${readme.toolsPrelude}\n${readme.uninstall}`);
      await until("the API pod to be gone", 120_000, async () => (await apiPods()).length === 0);
    });
    const left = async (kinds: string) =>
      (JSON.parse(await kubectl("get", kinds, "-n", RUN_NS, "-o", "json")) as { items: { kind: string; metadata: { name: string } }[] }).items.map(
        (o) => o.kind,
      );
    const kinds = new Set(await left("runs.codeplane.dev,jobs,pods,networkpolicies,leases,roles,rolebindings,secrets"));
    // What the README lists: Runs, Jobs, pods, the workload NetworkPolicy (kept) and the Lease; the Role went with the release.
    expect([...kinds].sort()).toEqual(["Job", "Lease", "NetworkPolicy", "Pod", "Run"]);
    expect(readme.uninstallLeaves).toContain(
      "with `runNamespace.keep: true`, or a run namespace the chart did not create: that namespace with its Runs, Analyses, Jobs",
    );
    const lease = (await coordination.listNamespacedLease({ namespace: RUN_NS })).items.find((l) => l.metadata!.name!.startsWith("codeplane-controller-"))!;
    const identity = lease.spec!.holderIdentity ?? "";
    const renewedAgo = Date.now() - new Date(lease.spec!.renewTime as unknown as string).getTime();
    console.log(
      `keep: the Lease after uninstall: ${identity ? `held by ${identity} (pod ${holder}, gone), renewed ${(renewedAgo / 1000).toFixed(1)} s ago, expiring ${lease.spec!.leaseDurationSeconds} s after that` : "released"}`,
    );
    // Released, or marked held by the pod that is gone: the Role was deleted before that pod stopped.
    expect(identity === "" || identity.startsWith(`${holder}-`), identity).toBe(true);

    // A later install of the same release adopts the namespace, leads once the Lease expired, and reconciles the run it finds.
    await timed("keep: reinstall, adopting the namespace", () => sh(`${readme.toolsPrelude}\n${install}`));
    await connect();
    const [next] = await apiPods();
    await until("the new pod to lead", 30_000, async () => {
      const l = await coordination.readNamespacedLease({ name: lease.metadata!.name!, namespace: RUN_NS });
      return l.spec?.holderIdentity?.startsWith(`${next!.metadata!.name}-`);
    });
    expect(((await (await api(`/v1/runs/${runId}`)).json()) as { status: string }).status).toBe("running");
    expect((await api(`/v1/runs/${runId}/cancel`, { method: "POST" })).status).toBe(202);
    expect(await finished(runId, 60_000)).toMatchObject({ status: "cancelled" });

    await timed("keep: uninstall, then the namespace deleted by hand", async () => {
      await sh(`${readme.toolsPrelude}\n${readme.uninstall}\nkubectl delete namespace ${RUN_NS}`);
      await until("the run namespace to be gone", 180_000, async () => !(await exists(core.readNamespace({ name: RUN_NS }))));
    });
  });
});
