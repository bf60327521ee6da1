import type { Db } from "../../db/database.ts";
import type { EnvVarRow } from "../../db/schema.ts";

/** The variables a run of this repository sees: the account's, and the repository's own. */
const inScope = (db: Db, accountId: string, repositoryId: string) =>
  db
    .selectFrom("environment_variables")
    .where("account_id", "=", accountId)
    .where((eb) => eb.or([eb("repository_id", "is", null), eb("repository_id", "=", repositoryId)]));

/** The rows a run of this repository gets: account-wide and repository-scoped. */
export function envVarRowsForRepository(db: Db, accountId: string, repositoryId: string): Promise<EnvVarRow[]> {
  return inScope(db, accountId, repositoryId).selectAll().execute();
}

/**
 * What codeplane itself gives every run's command (the run's Job and the runner in its pod): a
 * program that reads them without a fallback (`os.environ["CODEPLANE_OUTPUT_DIR"]`, as
 * docs/users/results.md shows) is never missing them, so they never block a run.
 */
export const RUN_PROVIDED_ENV_NAMES: readonly string[] = ["CODEPLANE_COMMIT", "CODEPLANE_METRICS_FILE", "CODEPLANE_OUTPUT_DIR", "CODEPLANE_RUN_ID"];

/** Names of the variables a run of this repository would get: the account's and the repository's, and codeplane's own. */
export async function configuredEnvNames(db: Db, accountId: string, repositoryId: string): Promise<Set<string>> {
  const rows = await inScope(db, accountId, repositoryId).select("name").execute();
  return new Set([...RUN_PROVIDED_ENV_NAMES, ...rows.map((r) => r.name)]);
}
