import type { AdmissionDecision } from "../admission.ts";
import type { CheckoutDeps } from "../workload-secret.ts";
import type { V1Job, V1Pod, V1Secret } from "@kubernetes/client-node";
import { Unreconcilable } from "../../domain/workloads/unreconcilable.ts";
import { pino } from "pino";
import type { AnalyzerResult } from "@codeplane/analyzer";
import type { WorkloadMirror, WorkloadRows } from "../../domain/workloads/workload-rows.ts";
import type { ClusterActions, ClusterEvent, EventSubject } from "../../k8s/cluster-actions.ts";
import { DEFAULT_COMPUTE_TYPES } from "../../resources/compute-types.ts";
import type { AnalysisSpec, AnalysisStatus } from "../../resources/analysis.ts";
import type { WorkloadSpec, WorkloadStatus } from "../../resources/common.ts";
import type { RunSpec, RunStatus } from "../../resources/run.ts";
import type { FollowTarget } from "../../k8s/pod-log.ts";
import { newestPod } from "../../k8s/pods.ts";
import type { EnvironmentBuilds } from "../environment-builds.ts";
import { analysisWorkload } from "../analysis-workload.ts";
import { runWorkload, type RunWorkloadDeps } from "../run-workload.ts";
import type { Workload, WorkloadObservation, WorkloadResource } from "../workload.ts";
import { WorkloadReconciler, type LogArchive, type ResourceClient } from "../workload-reconciler.ts";
import { ANALYSIS, NAMESPACE, NOW, RUN, type JobBuilder, type KindFacts, type PodBuilder } from "./builders.ts";
import type { FinishedRun } from "../run-metrics.ts";

// Fakes for everything the reconciler acts through (cert-manager style): the
// informer caches, the resource client, the cluster, the database and the
// log archiver. Each records what was done to it, in order, in one list of
// short strings, so a test states a reconcile's whole effect as one array.
// Reads that matter (asking the API server, reading a pod's log) are recorded
// too: how often they happen is part of the contract.

/** The world one reconcile sees. */
export interface Given<Spec = WorkloadSpec, Status = WorkloadStatus> {
  resource: WorkloadResource<Spec, Status> | null;
  /** The Job in the informer cache. */
  job?: JobBuilder;
  /** Pods in the informer cache (and so in the API server). A V1Pod is taken as it is (another workload's). */
  pods?: (PodBuilder | V1Pod)[];
  /** Pods the API server has but the informer cache does not (yet, or any more). */
  apiPods?: PodBuilder[];
  /** The row was deleted through the API. */
  hidden?: boolean;
  /** The row cannot be written (its repository or account is gone, or another row holds its place); "later": from the second write on. */
  orphaned?: boolean | "later";
  /** The archiver is following the workload's logs. */
  archiving?: boolean;
  /** The main container's whole log, by pod name; a pod without one reads as gone (null). */
  logs?: Record<string, string>;
  /** The resource is deleted while the reconcile runs: patchStatus finds it gone. */
  vanishes?: boolean;
  /** The variables a run of the repository gets. */
  env?: Record<string, string>;
  /** Postgres cannot store the row (a data exception): the mirror throws what the real one throws; "finished": only a finished status's row. */
  unstorable?: boolean | "finished";
  /** How long finished resources are kept; a week when absent. */
  retentionSeconds?: number;
  /** CODEPLANE_INTERNAL_URL; null: unset. A node address when absent. */
  internalUrl?: string | null;
  /** Environment builds, as a run with an environment sees them (absent: none). */
  environments?: Pick<EnvironmentBuilds, "ensure">;
  /** What admission answers (absent: the reconciler is given none, as for analyses). */
  admission?: AdmissionDecision;
  /** Warm pools as a run sees them (absent: none). */
  warm?: RunWorkloadDeps["warm"];
  /** Another Job in the informer cache, under its own name (a warm pool's). */
  otherJob?: V1Job;
  /** An external engine (Kueue) admits instead: what it says of a Job that exists. */
  external?: AdmissionDecision;
  /** With an external engine: the run is not the one its account hands over next, and waits so (absent: it is). */
  behind?: AdmissionDecision & { admitted: false };
}

/** The checkout deps of a fake world: minting and revoking tokens are recorded actions. */
function checkoutDeps<Status>(r: Recorded<Status>, given: Given<unknown, unknown>): CheckoutDeps {
  return {
    internalUrl: given.internalUrl === undefined ? "http://10.244.0.1:8081" : given.internalUrl,
    egress: "restricted",
    preprocessEnv: {},
    async mint(grant) {
      r.actions.push(`mintToken ${grant.workloadKind} ${grant.workloadId}`);
      return "cpg_test-token";
    },
    async revoke(kind, id) {
      r.actions.push(`revokeTokens ${kind} ${id}`);
    },
  };
}

/** The installation the fake controller belongs to. */
export const INSTALLATION = "inst-ours";
export const RETENTION_SECONDS = 7 * 86_400;

export interface Recorded<Status> {
  actions: string[];
  jobs: V1Job[];
  secrets: V1Secret[];
  patched: Status[];
  events: { subject: EventSubject; event: ClusterEvent }[];
  archived: { id: string; target: FollowTarget; holdCompletion?: true }[];
  mirrored: WorkloadMirror<unknown, Status>[];
  saved: { id: string; result: AnalyzerResult }[];
  /** Runs whose terminal status was written, as the metrics saw them (run-metrics.ts). */
  finished: FinishedRun[];
}

const isBuilder = (p: PodBuilder | V1Pod): p is PodBuilder => typeof (p as PodBuilder).build === "function";

export function fakeWorld<Spec extends WorkloadSpec, Status extends WorkloadStatus, Obs extends WorkloadObservation>(
  k: KindFacts,
  given: Given<Spec, Status>,
  workload: (r: Recorded<Status>) => Workload<Spec, Status, Obs>,
) {
  const r: Recorded<Status> = { actions: [], jobs: [], secrets: [], patched: [], events: [], archived: [], mirrored: [], saved: [], finished: [] };
  const act = (a: string) => r.actions.push(a);
  let resource = given.resource ? structuredClone(given.resource) : null;
  const job = given.job?.build(k) ?? null;
  const cachedPods = (given.pods ?? []).map((p) => (isBuilder(p) ? p.build(k) : p));
  const apiPods = [...cachedPods, ...(given.apiPods ?? []).map((p) => p.build(k))];
  const inNamespace = (ns: string) => {
    if (ns !== NAMESPACE) throw new Error(`unexpected namespace ${ns}`);
  };

  const resources: ResourceClient<Spec, Status> = {
    namespace: NAMESPACE,
    async get(name) {
      return resource && resource.metadata.name === name ? structuredClone(resource) : null;
    },
    async patchStatus(name, status) {
      act(`patchStatus ${name} ${status.phase}`);
      r.patched.push(structuredClone(status));
      if (given.vanishes || !resource || resource.metadata.name !== name) return null;
      resource = { ...resource, status: structuredClone(status) };
      return structuredClone(resource);
    },
    async delete(name) {
      act(`delete ${name}`);
    },
  };

  const rows: WorkloadRows<Spec, Status> = {
    async mirror(m) {
      act(`mirror ${m.status?.phase ?? "-"}`);
      r.mirrored.push(structuredClone(m));
      const finished = m.status?.phase === "completed" || m.status?.phase === "failed" || m.status?.phase === "cancelled";
      if (given.unstorable === true || (given.unstorable === "finished" && finished))
        throw new Unreconcilable("Unstorable", "its row cannot be stored: unsupported Unicode escape sequence");
      const orphaned = given.orphaned === true || (given.orphaned === "later" && r.mirrored.length > 1);
      return orphaned ? "orphaned" : "mirrored";
    },
    async isHidden() {
      return given.hidden ?? false;
    },
    async resourceGone(id, workflowId) {
      act(`resourceGone ${id} ${workflowId}`);
    },
    async markLogsComplete(id) {
      act(`markLogsComplete ${id}`);
    },
  };

  const cluster: ClusterActions = {
    async createJob(ns, j) {
      inNamespace(ns);
      act(`createJob ${j.metadata?.name}`);
      r.jobs.push(structuredClone(j));
    },
    async getJob(ns, name) {
      inNamespace(ns);
      act(`getJob ${name}`);
      return r.jobs.find((j) => j.metadata?.name === name) ?? null;
    },
    async deleteJob(ns, name) {
      inNamespace(ns);
      act(`deleteJob ${name}`);
    },
    async createSecret(ns, s) {
      inNamespace(ns);
      act(`createSecret ${s.metadata?.name}`);
      r.secrets.push(structuredClone(s));
    },
    async deleteSecret(ns, name) {
      inNamespace(ns);
      act(`deleteSecret ${name}`);
    },
    async newestPod(ns, selector) {
      inNamespace(ns);
      act(`apiPods ${selector}`);
      // key=value[,key=value...]: every label must match.
      const wanted = selector.split(",").map((term) => term.split("="));
      return structuredClone(newestPod(apiPods.filter((p) => wanted.every(([key, value]) => key && p.metadata?.labels?.[key] === value))));
    },
    async readPodLog(ns, pod, container) {
      inNamespace(ns);
      act(`readPodLog ${pod} ${container}`);
      return given.logs?.[pod] ?? null;
    },
    async recordEvent(subject, event) {
      act(`event ${event.warning ? "Warning" : "Normal"} ${event.reason}: ${event.note}`);
      r.events.push({ subject, event });
    },
  };

  const archiver: LogArchive = {
    ensure(id, target, opts) {
      act(`archive ${id} ${target.pod}`);
      r.archived.push({ id, target, ...(opts?.holdCompletion && { holdCompletion: true }) });
    },
    isArchiving: () => given.archiving ?? false,
  };

  const reconciler = new WorkloadReconciler<Spec, Status, Obs>({
    workload: workload(r),
    resources,
    rows,
    cluster,
    jobs: {
      get: (name, ns) =>
        ns !== NAMESPACE
          ? undefined
          : job && job.metadata?.name === name
            ? structuredClone(job)
            : given.otherJob?.metadata?.name === name
              ? structuredClone(given.otherJob)
              : undefined,
    },
    pods: {
      list: (ns) => (ns === NAMESPACE ? structuredClone(cachedPods) : []),
    },
    archiver,
    installation: INSTALLATION,
    retentionSeconds: given.retentionSeconds ?? RETENTION_SECONDS,
    metrics: {
      unreconcilable: (kind, reason) => act(`metric unreconcilable ${kind} ${reason}`),
      untracked: (kind) => act(`metric untracked ${kind}`),
    },
    ...(given.external && {
      admission: {
        admit: () => Promise.reject(new Error("an external engine's admission is never asked admit")),
        admissible: () => [],
        external: {
          handOver: (res: { metadata: { name: string } }) => {
            act(`handOver ${res.metadata.name} ${given.behind ? given.behind.reason : "now"}`);
            return given.behind ?? null;
          },
          prepare: async (res: { metadata: { name: string } }, job: V1Job) => {
            act(`prepare ${res.metadata.name}`);
            return {
              ...job,
              metadata: { ...job.metadata, labels: { ...job.metadata?.labels, "kueue.x-k8s.io/queue-name": "q" } },
              spec: { ...job.spec!, suspend: true },
            };
          },
          created: () => ({ admitted: false as const, reason: "KueuePending" as const, message: "queued: waiting for Kueue", position: 1, recheckMs: 3000 }),
          observe: async (res: { metadata: { name: string } }) => {
            act(`observe ${res.metadata.name} ${given.external!.admitted ? "yes" : given.external!.reason}`);
            return given.external!;
          },
        },
      },
    }),
    ...(given.admission && {
      admission: {
        admit: async (res: { metadata: { name: string } }) => {
          act(`admit ${res.metadata.name} ${given.admission!.admitted ? "yes" : given.admission!.reason}`);
          return given.admission!;
        },
        admissible: () => [],
      },
    }),
    logger: pino({ level: "silent" }),
    now: () => new Date(NOW),
  });
  return { reconciler, recorded: r };
}

export const runWorld = (given: Given<RunSpec, RunStatus>) =>
  fakeWorld(RUN, given, (r) =>
    runWorkload({
      environments: given.environments ?? null,
      recordEnvironmentCache: async (id, cache) => {
        r.actions.push(`recordEnvironmentCache ${id} ${cache}`);
      },
      resolveEnv: async () => ({ ...given.env }),
      images: { runner: "runner:test", codeplane: "codeplane:test", pullPolicy: "IfNotPresent" },
      computeTypes: DEFAULT_COMPUTE_TYPES,
      jobTtlSeconds: 3600,
      checkout: checkoutDeps(r, given),
      beginAttempt: async (id, attempt, marker) => {
        r.actions.push(`beginAttempt ${id} ${attempt} ${marker.seq}`);
      },
      ...(given.warm && { warm: given.warm }),
      metrics: { finished: (run) => r.finished.push(run) },
    }),
  );

export const analysisWorld = (given: Given<AnalysisSpec, AnalysisStatus>) =>
  fakeWorld(ANALYSIS, given, (r) =>
    analysisWorkload({
      async saveResult(id, result) {
        r.actions.push(`saveResult ${id} ${result.experiments.length}`);
        r.saved.push({ id, result });
      },
      images: { codeplane: "codeplane:test", pullPolicy: "IfNotPresent" },
      computeTypes: DEFAULT_COMPUTE_TYPES,
      computeType: "cpu-general",
      jobTtlSeconds: 3600,
      checkout: checkoutDeps(r, given),
    }),
  );
