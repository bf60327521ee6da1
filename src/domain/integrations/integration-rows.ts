import type { Db } from "../../db/database.ts";
import type { IntegrationRow, NewIntegrationRow, RepositoryRow } from "../../db/schema.ts";
import { notFound } from "../errors.ts";
import { keysetPage } from "../shared/keyset.ts";
import type { PageRequest } from "../shared/pagination.ts";

// Every query on integrations, and on repositories through their integration.
// Stable names (the webhook handling uses them too): findLiveIntegrationByInstallationId,
// setInstallationSuspended, markInstallationDeleted, updateInstallationDetails,
// listIntegrationRepositories, findIntegrationRepository, detachRepositories.
//
// "Live" means not disconnected: a disconnected integration (DELETE through the
// API, or the installation deleted on GitHub) keeps its row with deleted_at and
// is invisible to everything here except the record itself. Disconnecting
// detaches its repositories (integration_id null, auto_analyze and report_check_runs off): they stay
// readable as of their last fetch and are not fetched again.

/** The account's live integration, if any (another account's is simply not found). */
export function findIntegration(db: Db, accountId: string, id: string): Promise<IntegrationRow | undefined> {
  return db.selectFrom("integrations").selectAll().where("id", "=", id).where("account_id", "=", accountId).where("deleted_at", "is", null).executeTakeFirst();
}

/** The account's live integration, or the 404 every endpoint under an integration answers. */
export async function requireIntegration(db: Db, accountId: string, id: string): Promise<IntegrationRow> {
  const row = await findIntegration(db, accountId, id);
  if (!row) throw notFound("Integration");
  return row;
}

/** A live integration by id, whatever its account (for fetches, which start from a repository row). */
export function findLiveIntegrationById(db: Db, id: string): Promise<IntegrationRow | undefined> {
  return db.selectFrom("integrations").selectAll().where("id", "=", id).where("deleted_at", "is", null).executeTakeFirst();
}

/** The live integration of a GitHub installation, whatever its account (webhooks name installations, not accounts). */
export function findLiveIntegrationByInstallationId(db: Db, installationId: number): Promise<IntegrationRow | undefined> {
  return db
    .selectFrom("integrations")
    .selectAll()
    .where("provider", "=", "github")
    .where("installation_id", "=", String(installationId))
    .where("deleted_at", "is", null)
    .executeTakeFirst();
}

/** Throws the unique violation integrations_live_installation_key when the installation is connected already. */
export function insertIntegration(db: Db, row: NewIntegrationRow): Promise<IntegrationRow> {
  return db.insertInto("integrations").values(row).returningAll().executeTakeFirstOrThrow();
}

export function listIntegrations(db: Db, accountId: string, page: PageRequest): Promise<IntegrationRow[]> {
  return keysetPage(db.selectFrom("integrations").selectAll().where("account_id", "=", accountId).where("deleted_at", "is", null), page).execute();
}

/** Suspends or unsuspends the live integration of the installation; its row, or undefined when none is connected. */
export function setInstallationSuspended(db: Db, installationId: number, suspended: boolean): Promise<IntegrationRow | undefined> {
  return db
    .updateTable("integrations")
    .set({ suspended, updated_at: new Date() })
    .where("provider", "=", "github")
    .where("installation_id", "=", String(installationId))
    .where("deleted_at", "is", null)
    .returningAll()
    .executeTakeFirst();
}

/** What GitHub says about the installation now (login renamed, selection changed, suspended or not). */
export function updateInstallationDetails(
  db: Db,
  id: string,
  details: { account_login: string; account_type: string; repository_selection: string; suspended: boolean },
): Promise<IntegrationRow | undefined> {
  return db
    .updateTable("integrations")
    .set({ ...details, updated_at: new Date() })
    .where("id", "=", id)
    .where("deleted_at", "is", null)
    .returningAll()
    .executeTakeFirst();
}

/**
 * Disconnects a live integration (of `accountId`, or of any account when null)
 * and detaches its repositories, in one transaction. False when there was none.
 */
export async function disconnectIntegration(db: Db, accountId: string | null, id: string): Promise<boolean> {
  return db.transaction().execute(async (tx) => {
    let q = tx.updateTable("integrations").set({ deleted_at: new Date(), updated_at: new Date() }).where("id", "=", id).where("deleted_at", "is", null);
    if (accountId !== null) q = q.where("account_id", "=", accountId);
    const res = await q.executeTakeFirst();
    if (res.numUpdatedRows === 0n) return false;
    await tx
      .updateTable("repositories")
      .set({ integration_id: null, auto_analyze: false, report_check_runs: false, updated_at: new Date() })
      .where("integration_id", "=", id)
      .execute();
    return true;
  });
}

/** The installation was deleted on GitHub: its live integration is disconnected (see disconnectIntegration). Its row, if one was live. */
export async function markInstallationDeleted(db: Db, installationId: number): Promise<IntegrationRow | undefined> {
  const row = await findLiveIntegrationByInstallationId(db, installationId);
  if (!row) return undefined;
  return (await disconnectIntegration(db, null, row.id)) ? row : undefined;
}

/** The repositories registered through the integration (still attached to it). */
export function listIntegrationRepositories(db: Db, integrationId: string): Promise<RepositoryRow[]> {
  return db.selectFrom("repositories").selectAll().where("integration_id", "=", integrationId).orderBy("id", "desc").execute();
}

/** The repository registered through the integration for GitHub's repository id, if any. */
export function findIntegrationRepository(db: Db, integrationId: string, githubRepositoryId: number): Promise<RepositoryRow | undefined> {
  return db
    .selectFrom("repositories")
    .selectAll()
    .where("integration_id", "=", integrationId)
    .where("github_repository_id", "=", String(githubRepositoryId))
    .executeTakeFirst();
}

/**
 * The installation lost access to these repositories (installation_repositories
 * removed): they are detached like a disconnect's and no longer fetched. The detached rows.
 */
export function detachRepositories(db: Db, integrationId: string, githubRepositoryIds: readonly number[]): Promise<RepositoryRow[]> {
  if (githubRepositoryIds.length === 0) return Promise.resolve([]);
  return db
    .updateTable("repositories")
    .set({ integration_id: null, auto_analyze: false, report_check_runs: false, updated_at: new Date() })
    .where("integration_id", "=", integrationId)
    .where("github_repository_id", "in", githubRepositoryIds.map(String))
    .returningAll()
    .execute();
}
