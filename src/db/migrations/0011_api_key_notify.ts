import { sql, type Kysely } from "kysely";

// Processes cache the API keys in use (src/domain/auth/api-key-cache.ts) and
// must drop them the moment one is revoked, re-scoped, re-dated or deleted,
// whoever does it (the API, the CLI, OIDC sign-in, an account's deletion, SQL
// by hand): so the table itself announces each such change, at commit.
// last_used_at, written once a minute per key in use, does not.

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create function api_keys_changed() returns trigger language plpgsql as $$
    begin
      perform pg_notify('api_keys_changed', coalesce(new.id, old.id)::text);
      return null;
    end $$`.execute(db);
  await sql`
    create trigger api_keys_changed
    after update of revoked_at, expires_at, scopes, key_hash, account_id or delete on api_keys
    for each row execute function api_keys_changed()`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop trigger if exists api_keys_changed on api_keys`.execute(db);
  await sql`drop function if exists api_keys_changed()`.execute(db);
}
