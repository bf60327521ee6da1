import {
  ApiextensionsV1Api,
  CoreV1Api,
  NetworkingV1Api,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
  type V1CustomResourceDefinition,
  type V1NetworkPolicy,
} from "@kubernetes/client-node";
import { isNotFound, isAlreadyExists, isConflict } from "./client.ts";
import { CRD_FILES } from "../resources/definition.ts";
import type { EgressMode, EgressRule } from "../resources/egress.ts";
import { RESTRICTED_POD_SECURITY_LABELS } from "../resources/labels.ts";
import { gitEndpointFromUrl, type GitEndpoint } from "../resources/egress-settings.ts";
import { buildWorkloadNetworkPolicy, EgressSettingsError, WORKLOAD_POLICY_NAME } from "./network-policy.ts";

// `codeplane install`: what a cluster needs before codeplane can run there,
// for development and tests (Helm does the same in production): the CRDs, the
// run namespace under the restricted Pod Security Standard, and the
// NetworkPolicy that confines run and analysis pods. The controller applies
// that same policy at start when CODEPLANE_RUN_EGRESS_POLICY names it (the
// Helm chart does), so both paths build it with this one plan
// (docs/decisions/0100-network-policy-one-author.md).

export async function applyCrds(config: KubeConfig): Promise<string[]> {
  const api = config.makeApiClient(ApiextensionsV1Api);
  const names: string[] = [];
  for (const build of Object.values(CRD_FILES)) {
    const body = build() as unknown as V1CustomResourceDefinition;
    const name = body.metadata!.name!;
    try {
      const existing = await api.readCustomResourceDefinition({ name });
      await api.replaceCustomResourceDefinition({
        name,
        body: { ...body, metadata: { ...body.metadata, resourceVersion: existing.metadata!.resourceVersion! } },
      });
    } catch (err) {
      if (!isNotFound(err)) throw err;
      await api.createCustomResourceDefinition({ body });
    }
    // Wait until the API server serves the new type, so a Run can be created right after.
    for (let i = 0; i < 100; i++) {
      const crd = await api.readCustomResourceDefinition({ name });
      if (crd.status?.conditions?.some((c) => c.type === "Established" && c.status === "True")) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    names.push(name);
  }
  return names;
}

/** Creates the namespace, or adds `labels` to the existing one (its other labels stay). */
export async function ensureNamespace(config: KubeConfig, namespace: string, labels: Record<string, string> = {}): Promise<void> {
  const api = config.makeApiClient(CoreV1Api);
  try {
    await api.createNamespace({ body: { metadata: { name: namespace, labels: { ...labels } } } });
  } catch (err) {
    if (!isAlreadyExists(err)) throw err;
    if (Object.keys(labels).length) {
      await api.patchNamespace({ name: namespace, body: { metadata: { labels: { ...labels } } } }, setHeaderOptions("Content-Type", PatchStrategy.MergePatch));
    }
  }
}

/** Creates the NetworkPolicy, or replaces the one of that name with it. */
export async function applyNetworkPolicy(config: KubeConfig, policy: V1NetworkPolicy): Promise<void> {
  const api = config.makeApiClient(NetworkingV1Api);
  const { name, namespace } = policy.metadata as { name: string; namespace: string };
  for (let attempt = 0; ; attempt++) {
    try {
      const existing = await api.readNamespacedNetworkPolicy({ name, namespace });
      await api.replaceNamespacedNetworkPolicy({
        name,
        namespace,
        body: { ...policy, metadata: { ...policy.metadata, resourceVersion: existing.metadata!.resourceVersion! } },
      });
      return;
    } catch (err) {
      if (isNotFound(err)) {
        try {
          await api.createNamespacedNetworkPolicy({ namespace, body: policy });
          return;
        } catch (createErr) {
          if (!isAlreadyExists(createErr) || attempt >= 4) throw createErr;
          continue; // created meanwhile: replace it
        }
      }
      if (!isConflict(err) || attempt >= 4) throw err; // changed meanwhile: read it again
    }
  }
}

/** The settings install reads; codeplane's frozen Config has this shape. */
export interface InstallSettings {
  kubernetes: { namespace: string };
  runs: {
    internalUrl: string | null;
    egress: {
      mode: EgressMode;
      allow: readonly EgressRule[];
      clusterCidrs: readonly string[];
      /** The policy's name (CODEPLANE_RUN_EGRESS_POLICY); unset: codeplane-workloads. */
      policyName?: string | null;
      /** The git endpoint as pods (CODEPLANE_RUN_EGRESS_GIT_PODS), instead of CODEPLANE_INTERNAL_URL's address. */
      gitPods?: Extract<GitEndpoint, { podSelector: unknown }> | null;
    };
  };
}

export interface InstallPlan {
  namespace: string;
  namespaceLabels: Record<string, string>;
  networkPolicy: V1NetworkPolicy;
  git: GitEndpoint | null;
  /** What the operator should know although install goes ahead. */
  warnings: string[];
}

export interface InstallResult {
  crds: string[];
  namespace: string;
  networkPolicy: string;
  git: GitEndpoint | null;
  warnings: string[];
}

/** Settings install cannot turn into an enforceable policy; nothing has been changed in the cluster. */
export class InstallRefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "InstallRefusedError";
  }
}

/**
 * Pure: what install applies. The git endpoint is CODEPLANE_RUN_EGRESS_GIT_PODS
 * when set (the Helm chart names its API pods); otherwise CODEPLANE_INTERNAL_URL,
 * which must name an IP address (a DNS name cannot be an ipBlock); unset, no
 * git endpoint is opened (workloads refuse to start without one anyway) and a
 * warning says so.
 */
export function planInstall(settings: InstallSettings): InstallPlan {
  const { internalUrl, egress } = settings.runs;
  const warnings: string[] = [];
  let git: GitEndpoint | null = null;
  if (egress.gitPods) {
    git = egress.gitPods;
  } else if (internalUrl === null) {
    warnings.push(
      "CODEPLANE_INTERNAL_URL is not set: the run namespace's NetworkPolicy opens no git endpoint, and runs and analyses cannot start until it is set (then run codeplane install again)",
    );
  } else {
    const endpoint = gitEndpointFromUrl(internalUrl);
    if (typeof endpoint === "string") throw new InstallRefusedError(endpoint);
    git = endpoint;
  }
  try {
    const networkPolicy = buildWorkloadNetworkPolicy({
      namespace: settings.kubernetes.namespace,
      name: egress.policyName ?? WORKLOAD_POLICY_NAME,
      mode: egress.mode,
      allow: egress.allow,
      clusterCidrs: egress.clusterCidrs,
      git,
    });
    return { namespace: settings.kubernetes.namespace, namespaceLabels: { ...RESTRICTED_POD_SECURITY_LABELS }, networkPolicy, git, warnings };
  } catch (err) {
    if (err instanceof EgressSettingsError) throw new InstallRefusedError(err.message);
    throw err;
  }
}

/**
 * `codeplane install`: the CRDs, the run namespace (CODEPLANE_NAMESPACE)
 * labelled with the restricted Pod Security Standard (other labels of an
 * existing namespace stay), and the workload NetworkPolicy, created or
 * replaced. Idempotent. Throws InstallRefusedError, before touching the
 * cluster, for settings it cannot enforce.
 */
export async function installCluster(kubeConfig: KubeConfig, settings: InstallSettings): Promise<InstallResult> {
  const plan = planInstall(settings);
  const crds = await applyCrds(kubeConfig);
  await ensureNamespace(kubeConfig, plan.namespace, plan.namespaceLabels);
  await applyNetworkPolicy(kubeConfig, plan.networkPolicy);
  return { crds, namespace: plan.namespace, networkPolicy: plan.networkPolicy.metadata!.name!, git: plan.git, warnings: plan.warnings };
}

/**
 * The controller at start, when CODEPLANE_RUN_EGRESS_POLICY names the policy:
 * the workload NetworkPolicy `codeplane install` would apply for the same
 * settings, created or replaced, before any workload is started. Throws
 * InstallRefusedError for settings it cannot enforce (the process then stops).
 */
export async function applyWorkloadPolicy(kubeConfig: KubeConfig, settings: InstallSettings): Promise<InstallPlan> {
  const plan = planInstall(settings);
  await applyNetworkPolicy(kubeConfig, plan.networkPolicy);
  return plan;
}
