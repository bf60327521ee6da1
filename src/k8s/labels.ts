// Labels the contract promises on everything codeplane creates, so platform
// teams can select, audit and clean up by account, repository or run.
export const MANAGED_BY = { "app.kubernetes.io/managed-by": "codeplane" } as const;
/** The label that ties a pod to its run or analysis. */
export const RUN_LABEL = "codeplane.dev/run";
export const ANALYSIS_LABEL = "codeplane.dev/analysis";

export function runLabels(accountId: string, repositoryId: string, runId: string): Record<string, string> {
  return {
    ...MANAGED_BY,
    "app.kubernetes.io/component": "run",
    "codeplane.dev/account": accountId,
    "codeplane.dev/repository": repositoryId,
    "codeplane.dev/run": runId,
  };
}

/** Deterministic child names: a retried reconcile finds what the last one created. */
export const runResourceName = (runId: string) => `run-${runId}`;
export const runSecretName = (runId: string) => `run-${runId}-env`;

export function analysisLabels(accountId: string, repositoryId: string, analysisId: string): Record<string, string> {
  return {
    ...MANAGED_BY,
    "app.kubernetes.io/component": "analysis",
    "codeplane.dev/account": accountId,
    "codeplane.dev/repository": repositoryId,
    "codeplane.dev/analysis": analysisId,
  };
}

export const analysisResourceName = (analysisId: string) => `analysis-${analysisId}`;
