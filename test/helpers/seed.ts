import { randomUUID } from "node:crypto";
import type { Insertable, Kysely } from "kysely";
import type { Database } from "../../src/db/schema.ts";
import type { RunSpec } from "../../src/resources/run.ts";

/** An account with one repository row (no mirror behind it): for tests that work on rows directly. */
export async function seedAccountWithRepository(db: Kysely<Database>): Promise<{ accountId: string; repositoryId: string }> {
  const accountId = randomUUID();
  const repositoryId = randomUUID();
  await db
    .insertInto("accounts")
    .values({ id: accountId, name: `a-${accountId.slice(0, 8)}` })
    .execute();
  await db
    .insertInto("repositories")
    .values({
      id: repositoryId,
      account_id: accountId,
      name: "r",
      url: "https://example.invalid/r",
      provider: "git",
      created_at: new Date(),
      updated_at: new Date(),
    })
    .execute();
  return { accountId, repositoryId };
}

/** A run row (no resource behind it), for tests of what is read from rows: the status, and whether its logs are archived; `set` adds or overrides columns. */
export async function insertRunRow(
  db: Kysely<Database>,
  r: { accountId: string; repositoryId: string; status: Database["runs"]["status"]; logsComplete?: boolean; set?: Partial<Insertable<Database["runs"]>> },
): Promise<string> {
  const id = randomUUID();
  await db
    .insertInto("runs")
    .values({
      id,
      account_id: r.accountId,
      repository_id: r.repositoryId,
      commit_hash: "a".repeat(40),
      workflow_id: `codeplane/run-${id}`,
      status: r.status,
      logs_complete: r.logsComplete ?? false,
      compute_type: "cpu-general",
      run_config: JSON.stringify({ command: ["true"], parameters: {}, timeout_seconds: 60 }),
      updated_at: new Date(),
      ...r.set,
    })
    .execute();
  return id;
}

/** The spec of a run that only runs `true`, for tests that mirror a run's rows as the controller does. */
export const trueRunSpec = (runId: string, accountId: string, repositoryId: string): RunSpec => ({
  runId,
  accountId,
  repositoryId,
  repositoryUrl: "https://example.invalid/r.git",
  commitHash: "c".repeat(40),
  command: ["true"],
  computeType: "cpu-small",
  timeoutSeconds: 60,
});
