import { z } from "zod";
import type { Db } from "../db/database.ts";
import { scopeSchema } from "../domain/auth/scopes.ts";
import { notFound } from "../domain/errors.ts";
import { keysetPage } from "../domain/shared/keyset.ts";
import { toPage, type Page, type PageRequest } from "../domain/shared/pagination.ts";
import { iso } from "../domain/shared/time.ts";
import type { Logger } from "../logger.ts";

// What an account has authorised, seen and revoked through /v1/oauth/clients
// and /v1/oauth/grants.

export const oauthClientSchema = z
  .object({
    client_id: z.string(),
    client_name: z.string(),
    redirect_uris: z.array(z.string()),
    grant_types: z.array(z.enum(["authorization_code", "refresh_token", "client_credentials"])),
    token_endpoint_auth_method: z.enum(["none", "client_secret_basic", "client_secret_post"]),
    scope: z.string().nullable().meta({ description: "The scopes the client may ask for (space-separated); null: any." }),
    created_at: z.iso.datetime(),
  })
  .meta({
    id: "OAuthClient",
    description: "A client registered with an API key of this account (POST /oauth/register with `Authorization: Bearer <API key>`).",
  });
export type OAuthClientView = z.infer<typeof oauthClientSchema>;

export const oauthGrantSchema = z
  .object({
    id: z.uuid(),
    client_id: z.string().meta({ description: "A registered client's id, or the URL of its client ID metadata document." }),
    client_name: z.string(),
    scopes: z.array(scopeSchema),
    api_key_id: z.uuid().meta({ description: "The API key the person signed in with; revoking it ends this grant and its tokens." }),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .meta({ id: "OAuthGrant", description: "Remembered consent: what a person of this account allowed a client. Its tokens work while it does." });
export type OAuthGrantView = z.infer<typeof oauthGrantSchema>;

export async function listClients(db: Db, accountId: string, page: PageRequest): Promise<Page<OAuthClientView>> {
  const q = db
    .selectFrom("oauth_clients")
    .select(["client_id as id", "client_name", "redirect_uris", "grant_types", "token_endpoint_auth_method", "scopes", "created_at"])
    .where("account_id", "=", accountId)
    .where("kind", "=", "registered")
    .where("deleted_at", "is", null);
  return toPage(await keysetPage(q, page, "client_id").execute(), page.limit, (r) => ({
    client_id: r.id,
    client_name: r.client_name,
    redirect_uris: r.redirect_uris,
    grant_types: r.grant_types as OAuthClientView["grant_types"],
    token_endpoint_auth_method: r.token_endpoint_auth_method,
    scope: r.scopes ? r.scopes.join(" ") : null,
    created_at: iso(r.created_at),
  }));
}

/** Deletes a client the account registered: every grant, code and token of it stops working at once. */
export async function deleteClient(db: Db, accountId: string, clientId: string, logger: Logger): Promise<void> {
  await db.transaction().execute(async (tx) => {
    const now = new Date();
    const r = await tx
      .updateTable("oauth_clients")
      .set({ deleted_at: now })
      .where("client_id", "=", clientId)
      .where("account_id", "=", accountId)
      .where("kind", "=", "registered")
      .where("deleted_at", "is", null)
      .executeTakeFirst();
    if (Number(r.numUpdatedRows) === 0) throw notFound("OAuth client");
    await tx.updateTable("oauth_grants").set({ revoked_at: now }).where("client_id", "=", clientId).where("revoked_at", "is", null).execute();
    await tx.updateTable("oauth_tokens").set({ revoked_at: now }).where("client_id", "=", clientId).where("revoked_at", "is", null).execute();
  });
  logger.info({ event: "oauth.client_deleted", account_id: accountId, client_id: clientId }, "OAuth client deleted");
}

export async function listGrants(db: Db, accountId: string, page: PageRequest): Promise<Page<OAuthGrantView>> {
  const q = db
    .selectFrom("oauth_grants as g")
    .innerJoin("oauth_clients as c", "c.client_id", "g.client_id")
    .select(["g.id", "g.client_id", "c.client_name", "g.scopes", "g.api_key_id", "g.created_at", "g.updated_at"])
    .where("g.account_id", "=", accountId)
    .where("g.revoked_at", "is", null);
  return toPage(await keysetPage(q, page, "g.id").execute(), page.limit, (r) => ({
    id: r.id,
    client_id: r.client_id,
    client_name: r.client_name,
    scopes: r.scopes as OAuthGrantView["scopes"],
    api_key_id: r.api_key_id,
    created_at: iso(r.created_at),
    updated_at: iso(r.updated_at),
  }));
}

/** Revokes a grant: its tokens stop working at once, and the client must ask again. */
export async function revokeGrant(db: Db, accountId: string, grantId: string, logger: Logger): Promise<void> {
  await db.transaction().execute(async (tx) => {
    const now = new Date();
    const r = await tx
      .updateTable("oauth_grants")
      .set({ revoked_at: now })
      .where("id", "=", grantId)
      .where("account_id", "=", accountId)
      .where("revoked_at", "is", null)
      .executeTakeFirst();
    if (Number(r.numUpdatedRows) === 0) throw notFound("OAuth grant");
    await tx.updateTable("oauth_tokens").set({ revoked_at: now }).where("grant_id", "=", grantId).where("revoked_at", "is", null).execute();
    await tx.updateTable("oauth_codes").set({ used_at: now }).where("grant_id", "=", grantId).where("used_at", "is", null).execute();
  });
  logger.info({ event: "oauth.grant_revoked", account_id: accountId, grant_id: grantId }, "OAuth grant revoked");
}
