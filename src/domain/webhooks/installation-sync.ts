import type { Db } from "../../db/database.ts";
import {
  detachRepositories,
  findLiveIntegrationByInstallationId,
  markInstallationDeleted,
  setInstallationSuspended,
  updateInstallationDetails,
} from "../integrations/integration-rows.ts";
import { abandonCheckRunsOfInstallation } from "./check-run-rows.ts";
import type { RepositoryRef } from "./decide.ts";
import type { InstallationSync } from "./handle.ts";

// installation and installation_repositories deliveries, applied to the
// integration rows: the same rules as the integrations API (a deleted
// installation disconnects like DELETE /v1/integrations/{id}; a repository the
// installation lost is detached and no longer fetched).

const ids = (repos: RepositoryRef[]) => repos.map((r) => r.id).filter((id): id is number => id !== null);

export function installationSync(db: Db): InstallationSync {
  return {
    async setSuspended(installationId, suspended) {
      return (await setInstallationSuspended(db, installationId, suspended)) !== undefined;
    },
    async deleted(installationId) {
      const known = (await markInstallationDeleted(db, installationId)) !== undefined;
      // Its analyses go on (they run from codeplane's mirror); their check runs cannot be reported any more.
      await abandonCheckRunsOfInstallation(
        db,
        installationId,
        "the GitHub App installation was deleted: GitHub revoked its access, so this check run can no longer be updated",
      );
      return known;
    },
    async refresh(installationId, d) {
      const row = await findLiveIntegrationByInstallationId(db, installationId);
      if (!row) return false;
      await updateInstallationDetails(db, row.id, {
        account_login: d.accountLogin ?? row.account_login,
        account_type: d.accountType ?? row.account_type,
        repository_selection: d.repositorySelection ?? row.repository_selection,
        suspended: row.suspended,
      });
      return true;
    },
    async repositoriesRemoved(installationId, repositories) {
      const row = await findLiveIntegrationByInstallationId(db, installationId);
      if (!row) return 0;
      return (await detachRepositories(db, row.id, ids(repositories))).length;
    },
    async repositoriesAdded(installationId, repositories) {
      // Repositories detached when the installation lost them come back to it
      // (fetched again); auto_analyze and report_check_runs stay off until someone turns them on.
      const row = await findLiveIntegrationByInstallationId(db, installationId);
      const back = ids(repositories);
      if (!row || !back.length) return 0;
      const r = await db
        .updateTable("repositories")
        .set({ integration_id: row.id, updated_at: new Date() })
        .where("account_id", "=", row.account_id)
        .where("provider", "=", "github")
        .where("integration_id", "is", null)
        .where("github_repository_id", "in", back.map(String))
        .executeTakeFirst();
      return Number(r.numUpdatedRows);
    },
  };
}
