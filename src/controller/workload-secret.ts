import type { CheckoutGrant, WorkloadKindName } from "../domain/checkout/checkout-tokens.ts";
import { Unreconcilable } from "../domain/workloads/unreconcilable.ts";
import type { ClusterActions } from "../k8s/cluster-actions.ts";
import { API_VERSION } from "../resources/common.ts";
import { resourceNameOf, type WorkloadKind } from "../resources/lifecycle.ts";
import type { EgressMode } from "../resources/egress.ts";
import { CHECKOUT_TOKEN_KEY, type CheckoutInput } from "../k8s/run-job.ts";
import type { WorkloadResource } from "./workload.ts";

// Every workload's pod gets one Secret, owned by its resource (so it goes
// with it) and named like it: the checkout token the pod fetches its commit
// with, and for runs the environment values. The token is minted here, just
// before the Job, and lives until the workload's deadline; the Secret and the
// token both go once the workload's main container has started (release).

export interface CheckoutDeps {
  /** CODEPLANE_INTERNAL_URL; null: no workload can check out, and each says so. */
  internalUrl: string | null;
  egress: EgressMode;
  preprocessEnv: Readonly<Record<string, string>>;
  mint(grant: CheckoutGrant): Promise<string>;
  revoke(kind: WorkloadKindName, workloadId: string): Promise<void>;
}

/** Minutes beyond the Job's deadline the token stays valid: the deadline starts when the Job does, a little after minting. */
const DEADLINE_SLACK_SECONDS = 120;

interface CheckoutSpec {
  accountId: string;
  repositoryId: string;
  commitHash: string;
  timeoutSeconds: number;
}

export const workloadSecretName = (w: Pick<WorkloadKind, "noun">, id: string) => resourceNameOf(w, id);

/** Creates the workload's Secret (a token and `values`) unless it exists, and says how its pod checks out. */
export async function ensureWorkloadSecret<Spec extends CheckoutSpec>(
  w: Pick<WorkloadKind, "noun" | "kind">,
  id: string,
  resource: WorkloadResource<Spec, unknown>,
  cluster: ClusterActions,
  deps: CheckoutDeps,
  labels: Record<string, string>,
  values: Record<string, string> = {},
  /** The Secret's name, when not the workload's own (a run's later attempt: see run-workload.ts attemptSecretName). */
  secretName?: string,
  /** Seconds the workload may wait after this before its Job starts (queued in Kueue). */
  waitSeconds = 0,
): Promise<CheckoutInput> {
  if (!deps.internalUrl) {
    throw new Unreconcilable(
      "NoGitEndpoint",
      "CODEPLANE_INTERNAL_URL is not set, so pods cannot check out: an operator must set it to the address pods reach codeplane's git endpoint at",
    );
  }
  const { spec, metadata } = resource;
  const name = secretName ?? workloadSecretName(w, id);
  const token = await deps.mint({
    workloadKind: w.noun as WorkloadKindName,
    workloadId: id,
    accountId: spec.accountId,
    repositoryId: spec.repositoryId,
    commitHash: spec.commitHash,
    expiresAt: new Date(Date.now() + (spec.timeoutSeconds + DEADLINE_SLACK_SECONDS + waitSeconds) * 1000),
  });
  // An existing Secret (an earlier attempt that did not get to create the Job) keeps its own token, which is as valid.
  await cluster.createSecret(metadata.namespace, {
    metadata: {
      name,
      namespace: metadata.namespace,
      labels,
      ownerReferences: [{ apiVersion: API_VERSION, kind: w.kind, name: metadata.name, uid: metadata.uid, controller: true, blockOwnerDeletion: true }],
    },
    type: "Opaque",
    immutable: true,
    stringData: { ...values, [CHECKOUT_TOKEN_KEY]: token },
  });
  return {
    gitUrl: `${deps.internalUrl}/git/${spec.repositoryId}.git`,
    secretName: name,
    egress: deps.egress,
    preprocessEnv: deps.preprocessEnv,
  };
}

/** What a workload needed only to start: its Secret, and its checkout token. */
export async function releaseWorkloadSecret(
  w: Pick<WorkloadKind, "noun">,
  id: string,
  namespace: string,
  cluster: ClusterActions,
  deps: CheckoutDeps,
  /** Other Secrets of the workload to delete too (a run's attempts' own). */
  alsoSecrets: readonly string[] = [],
): Promise<void> {
  await cluster.deleteSecret(namespace, workloadSecretName(w, id));
  for (const name of alsoSecrets) await cluster.deleteSecret(namespace, name);
  await deps.revoke(w.noun as WorkloadKindName, id);
}
