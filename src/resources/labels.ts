import { ANALYSIS_WORKLOAD } from "./analysis.ts";
import { podLabelOf, resourceNameOf } from "./lifecycle.ts";
import { RUN_WORKLOAD } from "./run.ts";

// Labels the contract promises on everything codeplane creates, so platform
// teams can select, audit and clean up by account, repository or run.
export const MANAGED_BY = { "app.kubernetes.io/managed-by": "codeplane" } as const;
/** The installation (src/domain/workloads/installation.ts) that created a resource: only its controller acts on it. */
export const INSTALLATION_LABEL = "codeplane.dev/installation";
/** The label that ties a pod to its run or analysis. */
export const RUN_LABEL = podLabelOf(RUN_WORKLOAD);
export const ANALYSIS_LABEL = podLabelOf(ANALYSIS_WORKLOAD);

export function runLabels(accountId: string, repositoryId: string, runId: string): Record<string, string> {
  return {
    ...MANAGED_BY,
    "app.kubernetes.io/component": "run",
    "codeplane.dev/account": accountId,
    "codeplane.dev/repository": repositoryId,
    [RUN_LABEL]: runId,
  };
}

/** Deterministic child names: a retried reconcile finds what the last one created. */
export const runResourceName = (runId: string) => resourceNameOf(RUN_WORKLOAD, runId);
/** The run's Secret (checkout token, environment values) is named like the Run, as every workload's is. */
export const runSecretName = (runId: string) => runResourceName(runId);

export function analysisLabels(accountId: string, repositoryId: string, analysisId: string): Record<string, string> {
  return {
    ...MANAGED_BY,
    "app.kubernetes.io/component": "analysis",
    "codeplane.dev/account": accountId,
    "codeplane.dev/repository": repositoryId,
    [ANALYSIS_LABEL]: analysisId,
  };
}

export const analysisResourceName = (analysisId: string) => resourceNameOf(ANALYSIS_WORKLOAD, analysisId);

/**
 * The run namespace's Pod Security Standard: `restricted`, enforced (pods that
 * break it are refused) and also warned about and audited (Jobs whose pod
 * template breaks it), at the cluster's latest version of the standard.
 */
export const RESTRICTED_POD_SECURITY_LABELS = {
  "pod-security.kubernetes.io/enforce": "restricted",
  "pod-security.kubernetes.io/enforce-version": "latest",
  "pod-security.kubernetes.io/warn": "restricted",
  "pod-security.kubernetes.io/warn-version": "latest",
  "pod-security.kubernetes.io/audit": "restricted",
  "pod-security.kubernetes.io/audit-version": "latest",
} as const;

/** The label that ties an environment build's Job and pod to its environment (row id). */
export const ENVIRONMENT_LABEL = "codeplane.dev/environment";

export function environmentLabels(accountId: string, repositoryId: string, environmentId: string): Record<string, string> {
  return {
    ...MANAGED_BY,
    "app.kubernetes.io/component": "environment",
    "codeplane.dev/account": accountId,
    "codeplane.dev/repository": repositoryId,
    [ENVIRONMENT_LABEL]: environmentId,
  };
}

/** An environment build's Job and Secret. */
export const environmentResourceName = (environmentId: string) => `environment-${environmentId}`;
