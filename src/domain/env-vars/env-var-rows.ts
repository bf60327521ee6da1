import type { Db } from "../../db/database.ts";
import type { EnvVarRow } from "../../db/schema.ts";

/** The rows a run of this repository gets: account-wide and repository-scoped. */
export function envVarRowsForRepository(db: Db, accountId: string, repositoryId: string): Promise<EnvVarRow[]> {
  return db
    .selectFrom("environment_variables")
    .selectAll()
    .where("account_id", "=", accountId)
    .where((eb) => eb.or([eb("repository_id", "is", null), eb("repository_id", "=", repositoryId)]))
    .execute();
}

/** Names of the variables a run of this repository would get. */
export async function configuredEnvNames(db: Db, accountId: string, repositoryId: string): Promise<Set<string>> {
  const rows = await db
    .selectFrom("environment_variables")
    .select("name")
    .where("account_id", "=", accountId)
    .where((eb) => eb.or([eb("repository_id", "is", null), eb("repository_id", "=", repositoryId)]))
    .execute();
  return new Set(rows.map((r) => r.name));
}
