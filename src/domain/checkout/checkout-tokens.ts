import { createHash, randomBytes } from "node:crypto";
import type { Db } from "../../db/database.ts";

// Checkout tokens: how a run or analysis pod proves to codeplane's git
// endpoint which one commit of which repository it may fetch. 256 random
// bits, shown once (in the workload's Secret), stored only as a SHA-256
// (a slow hash would add nothing to a token this long), expiring with the
// workload's deadline and revoked when the workload's command starts or it
// ends, whichever comes first.

export type WorkloadKindName = "run" | "analysis" | "environment";

export interface CheckoutGrant {
  workloadKind: WorkloadKindName;
  workloadId: string;
  accountId: string;
  repositoryId: string;
  commitHash: string;
  expiresAt: Date;
}

const PREFIX = "cpg_";
const TOKEN = /^cpg_[A-Za-z0-9_-]{43}$/;

export const hashCheckoutToken = (token: string): string => createHash("sha256").update(token).digest("hex");

/** Mints a token for one workload's checkout; returns it (the only time it exists in clear). */
export async function mintCheckoutToken(db: Db, grant: CheckoutGrant, now: Date = new Date()): Promise<string> {
  const token = PREFIX + randomBytes(32).toString("base64url");
  await db.transaction().execute(async (tx) => {
    // Expired tokens are useless; clearing them here keeps the table as small as the live workloads.
    await tx.deleteFrom("checkout_tokens").where("expires_at", "<=", now).execute();
    await tx
      .insertInto("checkout_tokens")
      .values({
        token_hash: hashCheckoutToken(token),
        workload_kind: grant.workloadKind,
        workload_id: grant.workloadId,
        account_id: grant.accountId,
        repository_id: grant.repositoryId,
        commit_hash: grant.commitHash,
        expires_at: grant.expiresAt,
      })
      .execute();
  });
  return token;
}

/** What a presented token allows, or null (unknown, malformed, revoked or expired: all alike to the caller). */
export async function checkoutGrantFor(db: Db, token: string, now: Date = new Date()): Promise<CheckoutGrant | null> {
  if (!TOKEN.test(token)) return null;
  const row = await db
    .selectFrom("checkout_tokens")
    .select(["workload_kind", "workload_id", "account_id", "repository_id", "commit_hash", "expires_at"])
    .where("token_hash", "=", hashCheckoutToken(token))
    .where("expires_at", ">", now)
    .executeTakeFirst();
  if (!row) return null;
  return {
    workloadKind: row.workload_kind,
    workloadId: row.workload_id,
    accountId: row.account_id,
    repositoryId: row.repository_id,
    commitHash: row.commit_hash,
    expiresAt: row.expires_at,
  };
}

/** Revokes every token of a workload (its checkout is done, or it ended). */
export async function revokeCheckoutTokens(db: Db, kind: WorkloadKindName, workloadId: string): Promise<number> {
  const res = await db.deleteFrom("checkout_tokens").where("workload_kind", "=", kind).where("workload_id", "=", workloadId).executeTakeFirst();
  return Number(res.numDeletedRows);
}
