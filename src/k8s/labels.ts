// Labels the contract promises on everything codeplane creates, so platform
// teams can select, audit and clean up by account, repository or run.
export const MANAGED_BY = { "app.kubernetes.io/managed-by": "codeplane" } as const;

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
