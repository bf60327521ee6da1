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

/** Names of the variables a run of this repository would get. */
export async function configuredEnvNames(db: Db, accountId: string, repositoryId: string): Promise<Set<string>> {
  const rows = await inScope(db, accountId, repositoryId).select("name").execute();
  return new Set(rows.map((r) => r.name));
}
