import { sql, type Kysely } from "kysely";

// The OAuth 2.0 authorization server (src/oauth/). Every secret is stored as
// a SHA-256 hash only, like API keys: client secrets, authorization codes,
// access and refresh tokens, sign-in sessions.
//
// - oauth_clients: registered clients (RFC 7591) and fetched Client ID Metadata
//   Documents (the client_id is then the document's https URL). A client
//   registered with an API key belongs to that key's account (account_id,
//   api_key_id: client_credentials acts for it, and revoking the key stops it).
// - oauth_grants: what a person allowed a client (remembered consent), one live
//   grant per account and client; revoking it revokes its codes and tokens.
// - oauth_codes: authorization codes, single use, bound to the PKCE challenge,
//   redirect URI and resource.
// - oauth_tokens: access and refresh tokens; a refresh token's rotation keeps
//   its family, so reuse of a rotated one revokes the whole family.
// - oauth_sessions: the sign-in cookie of the authorization page (and later the
//   dashboard), bound to the API key the person signed in with.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("oauth_clients")
    .addColumn("client_id", "text", (c) => c.primaryKey())
    .addColumn("kind", "text", (c) => c.notNull().check(sql`kind in ('registered', 'metadata_document')`))
    .addColumn("account_id", "uuid", (c) => c.references("accounts.id").onDelete("cascade"))
    .addColumn("api_key_id", "uuid", (c) => c.references("api_keys.id").onDelete("cascade"))
    .addColumn("client_name", "text", (c) => c.notNull())
    .addColumn("redirect_uris", sql`text[]`, (c) => c.notNull())
    .addColumn("grant_types", sql`text[]`, (c) => c.notNull())
    .addColumn("token_endpoint_auth_method", "text", (c) =>
      c.notNull().check(sql`token_endpoint_auth_method in ('none', 'client_secret_basic', 'client_secret_post')`),
    )
    .addColumn("scopes", sql`text[]`)
    .addColumn("secret_hash", "text")
    .addColumn("metadata", "jsonb", (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("fetched_at", "timestamptz")
    .addColumn("deleted_at", "timestamptz")
    .execute();
  await sql`create index oauth_clients_account_idx on oauth_clients (account_id, created_at desc) where deleted_at is null`.execute(db);

  await db.schema
    .createTable("oauth_grants")
    .addColumn("id", "uuid", (c) => c.primaryKey())
    .addColumn("account_id", "uuid", (c) => c.notNull().references("accounts.id").onDelete("cascade"))
    .addColumn("client_id", "text", (c) => c.notNull().references("oauth_clients.client_id").onDelete("cascade"))
    .addColumn("api_key_id", "uuid", (c) => c.notNull().references("api_keys.id").onDelete("cascade"))
    .addColumn("scopes", sql`text[]`, (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("updated_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("revoked_at", "timestamptz")
    .execute();
  await sql`create unique index oauth_grants_live_idx on oauth_grants (account_id, client_id) where revoked_at is null`.execute(db);

  await db.schema
    .createTable("oauth_codes")
    .addColumn("code_hash", "text", (c) => c.primaryKey())
    .addColumn("grant_id", "uuid", (c) => c.notNull().references("oauth_grants.id").onDelete("cascade"))
    .addColumn("client_id", "text", (c) => c.notNull().references("oauth_clients.client_id").onDelete("cascade"))
    .addColumn("account_id", "uuid", (c) => c.notNull().references("accounts.id").onDelete("cascade"))
    .addColumn("api_key_id", "uuid", (c) => c.notNull().references("api_keys.id").onDelete("cascade"))
    .addColumn("redirect_uri", "text", (c) => c.notNull())
    .addColumn("scopes", sql`text[]`, (c) => c.notNull())
    .addColumn("resource", "text", (c) => c.notNull())
    .addColumn("code_challenge", "text", (c) => c.notNull())
    .addColumn("family_id", "uuid", (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("expires_at", "timestamptz", (c) => c.notNull())
    .addColumn("used_at", "timestamptz")
    .execute();

  await db.schema
    .createTable("oauth_tokens")
    .addColumn("id", "uuid", (c) => c.primaryKey())
    .addColumn("kind", "text", (c) => c.notNull().check(sql`kind in ('access', 'refresh')`))
    .addColumn("token_hash", "text", (c) => c.notNull().unique())
    .addColumn("family_id", "uuid", (c) => c.notNull())
    .addColumn("grant_id", "uuid", (c) => c.references("oauth_grants.id").onDelete("cascade"))
    .addColumn("client_id", "text", (c) => c.notNull().references("oauth_clients.client_id").onDelete("cascade"))
    .addColumn("account_id", "uuid", (c) => c.notNull().references("accounts.id").onDelete("cascade"))
    .addColumn("api_key_id", "uuid", (c) => c.notNull().references("api_keys.id").onDelete("cascade"))
    .addColumn("scopes", sql`text[]`, (c) => c.notNull())
    .addColumn("resource", "text", (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("expires_at", "timestamptz", (c) => c.notNull())
    .addColumn("rotated_at", "timestamptz")
    .addColumn("revoked_at", "timestamptz")
    .execute();
  await sql`create index oauth_tokens_family_idx on oauth_tokens (family_id)`.execute(db);
  await sql`create index oauth_tokens_grant_idx on oauth_tokens (grant_id)`.execute(db);
  await sql`create index oauth_tokens_client_idx on oauth_tokens (client_id)`.execute(db);

  await db.schema
    .createTable("oauth_sessions")
    .addColumn("id", "uuid", (c) => c.primaryKey())
    .addColumn("token_hash", "text", (c) => c.notNull().unique())
    .addColumn("account_id", "uuid", (c) => c.notNull().references("accounts.id").onDelete("cascade"))
    .addColumn("api_key_id", "uuid", (c) => c.notNull().references("api_keys.id").onDelete("cascade"))
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("expires_at", "timestamptz", (c) => c.notNull())
    .addColumn("revoked_at", "timestamptz")
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const t of ["oauth_sessions", "oauth_tokens", "oauth_codes", "oauth_grants", "oauth_clients"]) {
    await db.schema.dropTable(t).execute();
  }
}
