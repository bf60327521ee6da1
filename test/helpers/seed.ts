import { randomUUID } from "node:crypto";
import type { Kysely } from "kysely";
import type { Database } from "../../src/db/schema.ts";

/** An account with one repository row (no mirror behind it): for tests that work on rows directly. */
export async function seedAccountWithRepository(db: Kysely<Database>): Promise<{ accountId: string; repositoryId: string }> {
  const accountId = randomUUID();
  const repositoryId = randomUUID();
  await db.insertInto("accounts").values({ id: accountId, name: `a-${accountId.slice(0, 8)}` }).execute();
  await db
    .insertInto("repositories")
    .values({ id: repositoryId, account_id: accountId, name: "r", url: "https://example.invalid/r", provider: "git", created_at: new Date(), updated_at: new Date() })
    .execute();
  return { accountId, repositoryId };
}
