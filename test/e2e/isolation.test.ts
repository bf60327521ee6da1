import { execFile as execFileCb } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.ts";
import { installCluster } from "../../src/k8s/install.ts";
import { CHECKOUT_TOKEN_KEY } from "../../src/k8s/run-job.ts";
import { gitListenerEnv, NODE_ADDRESS, openTestCluster, until, type TestCluster } from "../helpers/cluster.ts";
import { createFixtureRepo, type FixtureRepo } from "../helpers/git-fixture.ts";
import { linesWithDuplicateKeys } from "../helpers/log-lines.ts";
import { startTestService, type Tenant, type TestService } from "../helpers/service.ts";

// Untrusted code in its pod: a local (file://) repository checks out through
// codeplane's git endpoint, the pod holds no credential, and under the
// workload NetworkPolicy that `codeplane install` applies a run reaches its
// git endpoint and nothing else on this machine or in the cluster. Probes go
// only to this machine's node address and to the cluster's pods.

const execFile = promisify(execFileCb);

let cluster: TestCluster;
let fixture: FixtureRepo;
let svc: TestService;
let alice: Tenant;
let repoId: string;
let depsCommit: string;
let mirror: Server;
let mirrorPort: number;
const cleanup: (() => Promise<void> | void)[] = [];

// Reports each host:port as open or closed, as JSON on one line.
const PROBE = `
const net = require("node:net");
const targets = process.argv.slice(1);
Promise.all(targets.map((t) => new Promise((resolve) => {
  const i = t.lastIndexOf(":");
  const s = net.connect({ host: t.slice(0, i), port: Number(t.slice(i + 1)) });
  const done = (state) => { s.destroy(); resolve([t, state]); };
  s.setTimeout(3000, () => done("closed"));
  s.once("connect", () => done("open"));
  s.once("error", () => done("closed"));
}))).then((r) => console.log(JSON.stringify(Object.fromEntries(r))));
`;

const settings = (egress: Record<string, string>) =>
  loadConfig({
    CODEPLANE_DATA_DIR: mkdtempSync(path.join(tmpdir(), "codeplane-iso-cfg-")),
    CODEPLANE_NAMESPACE: cluster.namespace,
    CODEPLANE_INTERNAL_URL: `http://${NODE_ADDRESS}:${svc.service.gitPort}`,
    ...egress,
  });

async function startRun(commit: string, command: string[]): Promise<string> {
  const res = await alice.api(`/v1/repositories/${repoId}/${commit}/runs`, { method: "POST", json: { command } });
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()).run_id;
}

async function finished(runId: string) {
  return until(`run ${runId} to finish`, 180_000, async () => {
    const run = await (await alice.api(`/v1/runs/${runId}`)).json();
    return ["completed", "failed", "cancelled"].includes(run.status) ? run : undefined;
  });
}

async function stdout(runId: string): Promise<string> {
  await until(
    "logs to be archived",
    30_000,
    async () => (await svc.db.selectFrom("runs").select("logs_complete").where("id", "=", runId).executeTakeFirst())?.logs_complete,
  );
  return (await (await alice.api(`/v1/runs/${runId}/logs/stdout`)).json()).content;
}

/** A workload container's whole log, for a failure message. */
async function containerLog(runId: string, container: string): Promise<string> {
  const pods = await cluster.core.listNamespacedPod({ namespace: cluster.namespace, labelSelector: `codeplane.dev/run=${runId}` });
  const name = pods.items[0]?.metadata?.name;
  if (!name) return "(no pod)";
  return cluster.core.readNamespacedPodLog({ name, namespace: cluster.namespace, container }).catch((err: unknown) => `(no log: ${String(err)})`);
}

/** A pod that is no codeplane workload (the policy does not select it): what the node and the cluster look like without the policy. */
async function probeFromPlainPod(name: string, targets: string[]): Promise<Record<string, string>> {
  await cluster.core.createNamespacedPod({
    namespace: cluster.namespace,
    body: {
      metadata: { name },
      spec: {
        restartPolicy: "Never",
        automountServiceAccountToken: false,
        securityContext: { runAsNonRoot: true, runAsUser: 10001, seccompProfile: { type: "RuntimeDefault" } },
        containers: [
          {
            name: "probe",
            image: "codeplane-runner:dev",
            imagePullPolicy: "Never",
            command: ["node", "-e", PROBE, ...targets],
            securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] } },
          },
        ],
      },
    },
  });
  const log = await until(`pod ${name} to report`, 90_000, async () => {
    const pod = await cluster.core.readNamespacedPod({ name, namespace: cluster.namespace });
    if (pod.status?.phase !== "Succeeded" && pod.status?.phase !== "Failed") return undefined;
    return cluster.core.readNamespacedPodLog({ name, namespace: cluster.namespace, container: "probe" });
  });
  return JSON.parse(log.trim().split("\n").pop()!);
}

/** A pod serving TCP on 8080: "another run's pod" to reach for. */
async function startVictimPod(): Promise<string> {
  await cluster.core.createNamespacedPod({
    namespace: cluster.namespace,
    body: {
      // Not a workload: what the probes below reach is closed by the prober's egress policy, not by the victim's.
      metadata: { name: "victim" },
      spec: {
        automountServiceAccountToken: false,
        securityContext: { runAsNonRoot: true, runAsUser: 10001, seccompProfile: { type: "RuntimeDefault" } },
        containers: [
          {
            name: "serve",
            image: "codeplane-runner:dev",
            imagePullPolicy: "Never",
            command: ["node", "-e", "require('node:net').createServer((s) => s.end('hi')).listen(8080)"],
            securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] } },
          },
        ],
      },
    },
  });
  return until("the victim pod to run", 60_000, async () => {
    const pod = await cluster.core.readNamespacedPod({ name: "victim", namespace: cluster.namespace });
    return pod.status?.phase === "Running" && pod.status.podIP ? pod.status.podIP : undefined;
  });
}

/** A PEP 503 index with one pure-Python wheel, served on the node address: the operator's package mirror. */
async function startPackageMirror(): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), "codeplane-mirror-"));
  cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
  const wheel = path.join(dir, "cpdemo-1.0-py3-none-any.whl");
  await execFile("python3", [
    "-c",
    `
import zipfile, sys
with zipfile.ZipFile(sys.argv[1], "w") as z:
    z.writestr("cpdemo/__init__.py", "GREETING = 'hello from the mirror'\\n")
    z.writestr("cpdemo-1.0.dist-info/METADATA", "Metadata-Version: 2.1\\nName: cpdemo\\nVersion: 1.0\\n")
    z.writestr("cpdemo-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\\nGenerator: test\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n")
    z.writestr("cpdemo-1.0.dist-info/RECORD", "")
`,
    wheel,
  ]);
  const bytes = await import("node:fs/promises").then((fs) => fs.readFile(wheel));
  mirror = createServer((req, res) => {
    if (req.url === "/simple/cpdemo/") {
      res.writeHead(200, { "content-type": "text/html" });
      res.end('<!doctype html><a href="/files/cpdemo-1.0-py3-none-any.whl">cpdemo-1.0-py3-none-any.whl</a>');
    } else if (req.url === "/files/cpdemo-1.0-py3-none-any.whl") {
      res.writeHead(200, { "content-type": "application/octet-stream" });
      res.end(bytes);
    } else {
      res.writeHead(404);
      res.end();
    }
  });
  await new Promise<void>((resolve) => mirror.listen(0, NODE_ADDRESS, resolve));
  mirrorPort = (mirror.address() as AddressInfo).port;
  cleanup.push(() => new Promise<void>((resolve) => mirror.close(() => resolve())));
}

beforeAll(async () => {
  cluster = await openTestCluster("cp-e2e-iso");
  fixture = await createFixtureRepo();
  await startPackageMirror();
  depsCommit = await fixture.commit("deps", {
    "requirements.txt": "cpdemo==1.0\n",
    "use.py": "import cpdemo\nprint(cpdemo.GREETING)\n",
  });
  svc = await startTestService({
    KUBECONFIG: cluster.kubeconfig,
    CODEPLANE_NAMESPACE: cluster.namespace,
    CODEPLANE_IMAGE_PULL_POLICY: "Never",
    // Every listener on every address, so the probes below find them open unless the policy closes them.
    CODEPLANE_HOST: "0.0.0.0",
    CODEPLANE_METRICS_PORT: "0",
    ...gitListenerEnv(),
    CODEPLANE_RUN_PREPROCESS_ENV: JSON.stringify({
      PIP_INDEX_URL: `http://${NODE_ADDRESS}:${mirrorPort}/simple`,
      PIP_DEFAULT_TIMEOUT: "3",
      PIP_TRUSTED_HOST: NODE_ADDRESS,
    }),
  });
  alice = await svc.tenant();
  // The README's way: a local repository, registered by its file:// URL.
  const res = await alice.api("/v1/repositories", { method: "POST", json: { url: fixture.url, name: "local" } });
  expect(res.status).toBe(201);
  repoId = (await res.json()).id;
  await installCluster(cluster.kc, settings({}));
}, 180_000);

afterAll(async () => {
  await svc?.close();
  for (const c of cleanup.reverse()) await c();
  await cluster?.cleanup();
  await fixture?.cleanup();
});

describe("isolation of untrusted code", () => {
  it("a file:// repository is analysed and runs, through codeplane's git endpoint", async () => {
    const analysis = await alice.api(`/v1/repositories/${repoId}/analysis/${fixture.commits.main}`, { method: "POST", json: {} });
    expect([200, 201, 202]).toContain(analysis.status);
    const done = await until("the analysis to finish", 180_000, async () => {
      const a = await (await alice.api(`/v1/repositories/${repoId}/analysis/${fixture.commits.main}`)).json();
      return ["completed", "failed", "cancelled"].includes(a.status) ? a : undefined;
    });
    expect(done.status, JSON.stringify(done)).toBe("completed");

    const runId = await startRun(fixture.commits.main, ["cat", "README.md"]);
    const run = await finished(runId);
    expect(run.status, run.error).toBe("completed");
    expect(await stdout(runId)).toBe(fixture.files["README.md"]);
  });

  it("no credential is in the pod spec, the environment or .git/config, and the run's token stops working when it ends", async () => {
    // Watch Secrets so the token is seen before it is deleted (once the command starts).
    const tokens: string[] = [];
    const watch = new k8s.Watch(cluster.kc);
    const req = await watch.watch(
      `/api/v1/namespaces/${cluster.namespace}/secrets`,
      {},
      (_type, obj: k8s.V1Secret) => {
        const t = obj.data?.[CHECKOUT_TOKEN_KEY];
        if (t) tokens.push(Buffer.from(t, "base64").toString("utf8"));
      },
      () => undefined,
    );
    const runId = await startRun(fixture.commits.main, ["sh", "-c", "cat .git/config; env; git config --list --show-origin || true"]);
    const run = await finished(runId);
    req.abort();
    expect(run.status, run.error).toBe("completed");
    const out = await stdout(runId);
    expect(tokens.length).toBeGreaterThan(0);
    const token = tokens.at(-1)!;
    expect(out).toContain(`/git/${repoId}.git`); // the remote is codeplane's endpoint ...
    expect(out).not.toContain(token); // ... without the token, in .git/config or the environment
    expect(out).not.toMatch(/CODEPLANE_CHECKOUT_TOKEN|Authorization|extraheader/i);
    expect(out).not.toContain(fixture.path); // nor the code host's address

    const job = await cluster.batch.readNamespacedJob({ name: `run-${runId}`, namespace: cluster.namespace });
    expect(JSON.stringify(job)).not.toContain(token);
    expect(JSON.stringify(job)).not.toContain(fixture.path);
    await expect(cluster.core.readNamespacedSecret({ name: `run-${runId}`, namespace: cluster.namespace })).rejects.toMatchObject({ code: 404 });

    const refs = `http://${NODE_ADDRESS}:${svc.service.gitPort}/git/${repoId}.git/info/refs?service=git-upload-pack`;
    expect((await fetch(refs, { headers: { authorization: `Bearer ${token}` } })).status).toBe(401);
  });

  it("from inside a run, only the git endpoint answers: not the API server, the kubelet, Postgres, the API's other ports or another pod", async () => {
    const victim = await startVictimPod();
    const pgPort = new URL(svc.databaseUrl).port;
    const kubernetes = await cluster.core.readNamespacedService({ name: "kubernetes", namespace: "default" });
    const targets = {
      git: `${NODE_ADDRESS}:${svc.service.gitPort}`,
      apiMain: `${NODE_ADDRESS}:${svc.service.port}`,
      apiMetrics: `${NODE_ADDRESS}:${svc.service.metricsPort}`,
      kubeApiServer: `${NODE_ADDRESS}:6443`,
      kubernetesService: `${kubernetes.spec!.clusterIP}:443`,
      kubelet: `${NODE_ADDRESS}:10250`,
      postgres: `${NODE_ADDRESS}:${pgPort}`,
      mirror: `${NODE_ADDRESS}:${mirrorPort}`,
      otherPod: `${victim}:8080`,
    };
    // Without the policy these are open, so the run's "closed" below is the policy's doing. (Here the API
    // server and Postgres listen on loopback only and the cluster has no Service proxy yet, so they are
    // probed but closed either way; on a real cluster they are what the policy must close.)
    const plain = await probeFromPlainPod("plain-probe", Object.values(targets));
    const loopbackOnly = new Set(["postgres", "kubeApiServer", "kubernetesService"]);
    for (const [name, t] of Object.entries(targets)) if (!loopbackOnly.has(name)) expect(plain[t], `${name} without the policy`).toBe("open");

    const runId = await startRun(fixture.commits.main, ["node", "-e", PROBE, ...Object.values(targets)]);
    expect((await finished(runId)).status).toBe("completed");
    const seen = JSON.parse((await stdout(runId)).trim());
    expect(seen).toEqual({
      [targets.git]: "open",
      [targets.apiMain]: "closed",
      [targets.apiMetrics]: "closed",
      [targets.kubeApiServer]: "closed",
      [targets.kubernetesService]: "closed",
      [targets.kubelet]: "closed",
      [targets.postgres]: "closed",
      [targets.mirror]: "closed",
      [targets.otherPod]: "closed",
    });
  });

  it("an environment build fails with a clear message under restricted egress, stays failed, and works once the operator allows the package mirror", async () => {
    const analysed = await alice.api(`/v1/repositories/${repoId}/analysis/${depsCommit}`, { method: "POST", json: {} });
    expect(analysed.status, await analysed.clone().text()).toBeLessThan(300);
    await until("the analysis to complete", 180_000, async () => {
      const a = await (await alice.api(`/v1/repositories/${repoId}/analysis/${depsCommit}`)).json();
      if (a.status === "failed") throw new Error(`analysis failed: ${a.error}`);
      return a.status === "completed" ? a : undefined;
    });
    const refused = await finished(await startRun(depsCommit, ["python3", "use.py"]));
    expect(refused.status).toBe("failed");
    expect(refused.error).toMatch(/environment build failed in step: .*pip install/);
    expect(refused.error).toMatch(/egress is restricted/);
    expect(refused.error).toMatch(/CODEPLANE_RUN_EGRESS_ALLOW/);
    const key = refused.environment.key as string;
    // A failed build stays failed for its key: the next run is refused at once instead of building again.
    const again = await alice.api(`/v1/repositories/${repoId}/${depsCommit}/runs`, { method: "POST", json: { command: ["python3", "use.py"] } });
    expect(again.status).toBe(409);
    expect((await again.json()).detail).toContain(`/v1/environments/${key}`);
    const env = await (await alice.api(`/v1/environments/${key}`)).json();
    expect(env.status).toBe("failed");
    expect(env.log).toMatch(/pip install/);

    await installCluster(cluster.kc, settings({ CODEPLANE_RUN_EGRESS_ALLOW: `${NODE_ADDRESS}/32@${mirrorPort}/tcp` }));
    expect((await alice.api(`/v1/environments/${key}`, { method: "DELETE" })).status).toBe(204);
    const allowed = await finished(await startRun(depsCommit, ["python3", "use.py"]));
    expect(allowed.status, `${allowed.error}\n${await containerLog(allowed.run_id, "environment")}`).toBe("completed");
    expect(allowed.environment).toMatchObject({ key, cache: "built" });
    expect(await stdout(allowed.run_id)).toBe("hello from the mirror\n");
  });

  it("with open egress the policy still excludes the metadata range and the cluster's, and the in-cluster probes stay closed", async () => {
    await installCluster(cluster.kc, settings({ CODEPLANE_RUN_EGRESS: "open" }));
    const policy = await cluster.kc.makeApiClient(k8s.NetworkingV1Api).listNamespacedNetworkPolicy({ namespace: cluster.namespace });
    const blocks = policy.items
      .flatMap((p) => p.spec?.egress ?? [])
      .flatMap((r) => r.to ?? [])
      .flatMap((peer) => (peer.ipBlock ? [peer.ipBlock] : []));
    const everywhere = blocks.find((b) => b.cidr === "0.0.0.0/0");
    expect(everywhere?.except).toEqual(expect.arrayContaining(["169.254.0.0/16", "10.0.0.0/8"]));
    expect(blocks.find((b) => b.cidr === "::/0")?.except).toEqual(expect.arrayContaining(["fd00:ec2::254/128"]));

    const targets = [`${NODE_ADDRESS}:${svc.service.gitPort}`, `${NODE_ADDRESS}:${svc.service.port}`, `${NODE_ADDRESS}:6443`, `${NODE_ADDRESS}:10250`];
    const runId = await startRun(fixture.commits.main, ["node", "-e", PROBE, ...targets]);
    expect((await finished(runId)).status).toBe("completed");
    expect(JSON.parse((await stdout(runId)).trim())).toEqual({
      [targets[0]!]: "open",
      [targets[1]!]: "closed",
      [targets[2]!]: "closed",
      [targets[3]!]: "closed",
    });
  });

  it("logged all this (controller, reconcilers, events, archiver, git) with each key once per line", () => {
    expect(svc.logs.some((l) => l.includes('"component":"run-reconciler"'))).toBe(true);
    expect(linesWithDuplicateKeys(svc.logs)).toEqual([]);
  });
});
