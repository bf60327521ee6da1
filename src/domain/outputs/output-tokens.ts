import { createHash, randomBytes } from "node:crypto";
import type { Db } from "../../db/database.ts";

// What a run's pod uploads its output files with (migration 0018). The
// checkout token is revoked as soon as the command starts, but outputs are
// sent when it ends, so a run gets this second token in its Secret: 256
// random bits, stored only as a SHA-256, opening exactly one thing (uploads
// to its own run's outputs) until its deadline, the collection margin and
// some slack have passed. The user's command can read it (it runs in the
// same container as the runner); all it could do with it is what it can do
// anyway: add files to its own run's outputs, within the limits.

const PREFIX = "cpo_";
const TOKEN = /^cpo_[A-Za-z0-9_-]{43}$/;
const hash = (token: string) => createHash("sha256").update(token).digest("hex");

export async function mintOutputToken(db: Db, runId: string, accountId: string, expiresAt: Date, now = new Date()): Promise<string> {
  const token = PREFIX + randomBytes(32).toString("base64url");
  await db.transaction().execute(async (tx) => {
    // Expired tokens are useless; clearing them here keeps the table as small as the live runs.
    await tx.deleteFrom("output_tokens").where("expires_at", "<=", now).execute();
    await tx
      .insertInto("output_tokens")
      .values({ token_hash: hash(token), run_id: runId, account_id: accountId, expires_at: expiresAt })
      .execute();
  });
  return token;
}

/** The account of the run the token uploads to, when it opens runId; null otherwise (unknown, malformed, expired, another run's: all alike). */
export async function outputGrantFor(db: Db, token: string, runId: string, now = new Date()): Promise<{ accountId: string } | null> {
  if (!TOKEN.test(token)) return null;
  const row = await db
    .selectFrom("output_tokens")
    .select(["account_id"])
    .where("token_hash", "=", hash(token))
    .where("run_id", "=", runId)
    .where("expires_at", ">", now)
    .executeTakeFirst();
  return row ? { accountId: row.account_id } : null;
}
