import type { Db } from "../../db/database.ts";
import type { Logger } from "../../logger.ts";
import type { AnalysisTrigger } from "../analyses/analysis-rows.ts";
import type { CreateAnalysisInput } from "../analyses/analyses.schemas.ts";
import { decideDelivery, type DeliveryAction, type RepositoryRef } from "./decide.ts";
import { findIntegrationRepository, findLiveIntegrationByInstallationId } from "../integrations/integration-rows.ts";

// Acting on one claimed delivery: decide (pure), then do it. The outcome is
// what the delivery record says afterwards; an exception means "try again".

export interface HandlerDeps {
  db: Db;
  logger: Logger;
  /** The analysis service's create (one analysis per repository and commit). */
  startAnalysis(
    db: Db,
    accountId: string,
    repositoryId: string,
    ref: string,
    input: CreateAnalysisInput,
    trigger: AnalysisTrigger,
  ): Promise<{ analysis: { id: string; status: string }; created: boolean }>;
  /** Records that this analysis reports to a check run on GitHub (idempotent per analysis). */
  trackCheckRun(a: { analysisId: string; installationId: number; repositoryFullName: string; headSha: string }): Promise<void>;
  /** Keeps integrations and their repositories in step with the installation on GitHub. */
  installations: InstallationSync;
}

export interface InstallationSync {
  /** Suspended on GitHub (or back): fetches fail with a clear error while it is. */
  setSuspended(installationId: number, suspended: boolean): Promise<boolean>;
  /** Deleted on GitHub: the integration is disconnected as a DELETE through the API would. */
  deleted(installationId: number): Promise<boolean>;
  /** Details GitHub changed (login after a rename, repository selection). */
  refresh(installationId: number, details: { accountLogin: string | null; accountType: string | null; repositorySelection: string | null }): Promise<boolean>;
  /** Repositories the installation can no longer see: their mirrors stop fetching. Returns how many registered repositories that affected. */
  repositoriesRemoved(installationId: number, repositories: RepositoryRef[]): Promise<number>;
  /** Repositories it can see again. */
  repositoriesAdded(installationId: number, repositories: RepositoryRef[]): Promise<number>;
}

export interface HandleOutcome {
  status: "handled" | "skipped";
  reason: string;
}

export async function handleDelivery(deps: HandlerDeps, delivery: { id: string; event: string; payload: unknown }): Promise<HandleOutcome> {
  const action = decideDelivery(delivery.event, delivery.payload);
  return act(deps, delivery.id, action);
}

async function act(deps: HandlerDeps, deliveryId: string, a: DeliveryAction): Promise<HandleOutcome> {
  switch (a.kind) {
    case "skip":
      return { status: "skipped", reason: a.reason };
    case "ping":
      return { status: "handled", reason: "ping" };
    case "installation": {
      const i = deps.installations;
      const known =
        a.action === "deleted"
          ? await i.deleted(a.installationId)
          : a.action === "created"
            ? await i.refresh(a.installationId, a)
            : await i.setSuspended(a.installationId, a.action === "suspend");
      if (!known)
        return {
          status: "skipped",
          reason: `installation ${a.installationId} is not connected to an account here (connect it with the install link or POST /v1/integrations/github)`,
        };
      return { status: "handled", reason: `installation ${a.action}` };
    }
    case "installation_repositories": {
      const removed = a.removed.length ? await deps.installations.repositoriesRemoved(a.installationId, a.removed) : 0;
      const added = a.added.length ? await deps.installations.repositoriesAdded(a.installationId, a.added) : 0;
      if (a.repositorySelection)
        await deps.installations.refresh(a.installationId, { accountLogin: null, accountType: null, repositorySelection: a.repositorySelection });
      return { status: "handled", reason: `${a.added.length} added (${added} registered here), ${a.removed.length} removed (${removed} registered here)` };
    }
    case "analyze":
      return analyze(deps, deliveryId, a);
  }
}

async function analyze(deps: HandlerDeps, deliveryId: string, a: Extract<DeliveryAction, { kind: "analyze" }>): Promise<HandleOutcome> {
  const integration = await findLiveIntegrationByInstallationId(deps.db, a.installationId);
  if (!integration) return { status: "skipped", reason: `installation ${a.installationId} is not connected to an account here` };
  if (integration.suspended) return { status: "skipped", reason: `installation ${a.installationId} is suspended` };
  if (a.repository.id === null) return { status: "skipped", reason: `${a.repository.fullName} has no repository id in the payload` };
  const repo = await findIntegrationRepository(deps.db, integration.id, a.repository.id);
  if (!repo) return { status: "skipped", reason: `${a.repository.fullName} is not registered (register it from the integration to have it analysed)` };
  if (!repo.auto_analyze) return { status: "skipped", reason: `auto_analyze is off for ${a.repository.fullName}` };
  const { analysis, created } = await deps.startAnalysis(deps.db, integration.account_id, repo.id, a.sha, a.branch ? { branch: a.branch.slice(0, 255) } : {}, {
    kind: a.trigger,
    deliveryId,
  });
  await deps.trackCheckRun({ analysisId: analysis.id, installationId: a.installationId, repositoryFullName: a.repository.fullName, headSha: a.sha });
  return { status: "handled", reason: `${created ? "started" : "already had"} analysis ${analysis.id} of ${a.sha.slice(0, 12)}` };
}
