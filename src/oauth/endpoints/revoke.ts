import type { Context } from "koa";
import { authenticateClient, presentedCredentials } from "../clients.ts";
import { invalidRequest } from "../errors.ts";
import { readForm } from "../http.ts";
import { revokeFamily, tokenRow } from "../store.ts";
import { baseOf, type EndpointDeps } from "./endpoint.ts";

// Token revocation (RFC 7009). A refresh token takes its whole family with it.

export const revoke =
  (d: Pick<EndpointDeps, "db" | "publicUrl" | "cimd" | "audit">) =>
  async (ctx: Context): Promise<void> => {
    const { db } = d;
    ctx.set("Cache-Control", "no-store");
    baseOf(ctx, d.publicUrl);
    const body = await readForm(ctx);
    const client = await authenticateClient(db, presentedCredentials(ctx.get("authorization") || undefined, body), d.cimd);
    if (!body.token) throw invalidRequest("token is required");
    const row = await tokenRow(db, body.token);
    // RFC 7009: unknown tokens, and tokens of other clients, are answered 200 all the same.
    if (row && row.client_id === client.clientId && !row.revoked_at) {
      const now = new Date();
      const n =
        row.kind === "refresh"
          ? await revokeFamily(db, row.family_id, now)
          : Number((await db.updateTable("oauth_tokens").set({ revoked_at: now }).where("id", "=", row.id).executeTakeFirst()).numUpdatedRows);
      d.audit.info(
        { event: "oauth.token_revoked", client_id: client.clientId, account_id: row.account_id, kind: row.kind, family_id: row.family_id, revoked: n },
        "OAuth token revoked",
      );
    }
    ctx.status = 200;
    ctx.body = "";
  };
