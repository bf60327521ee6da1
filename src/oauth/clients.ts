import http from "node:http";
import https from "node:https";
import { isIP } from "node:net";
import type { Db } from "../db/database.ts";
import type { OAuthClientsTable } from "../db/schema.ts";
import type { Selectable } from "kysely";
import { SCOPES, type Principal, type Scope } from "../domain/auth/scopes.ts";
import { inspectCloneUrl } from "../domain/repositories/clone-url-policy.ts";
import { DomainValidationError } from "../domain/errors.ts";
import { newId } from "../domain/shared/ids.ts";
import { textProblem } from "../domain/shared/storable-text.ts";
import { invalidClient, invalidClientMetadata, invalidRedirectUri, OAuthProblem } from "./errors.ts";
import { redirectUriProblem } from "./redirect-uris.ts";
import type { MetadataFetchGate } from "./metadata-fetches.ts";
import { hashSecret, newSecret, sameText } from "./secrets.ts";

export type AuthMethod = "none" | "client_secret_basic" | "client_secret_post";
export type GrantType = "authorization_code" | "refresh_token" | "client_credentials";

export interface OAuthClient {
  clientId: string;
  kind: "registered" | "metadata_document";
  accountId: string | null;
  apiKeyId: string | null;
  name: string;
  redirectUris: string[];
  grantTypes: GrantType[];
  authMethod: AuthMethod;
  /** Scopes the client may ask for; null: any. */
  scopes: Scope[] | null;
  secretHash: string | null;
  metadata: Record<string, unknown>;
  createdAt: Date;
}

const toClient = (r: Selectable<OAuthClientsTable>): OAuthClient => ({
  clientId: r.client_id,
  kind: r.kind,
  accountId: r.account_id,
  apiKeyId: r.api_key_id,
  name: r.client_name,
  redirectUris: r.redirect_uris,
  grantTypes: r.grant_types as GrantType[],
  authMethod: r.token_endpoint_auth_method,
  scopes: r.scopes as Scope[] | null,
  secretHash: r.secret_hash,
  metadata: r.metadata,
  createdAt: r.created_at,
});

const AUTH_METHODS: readonly AuthMethod[] = ["none", "client_secret_basic", "client_secret_post"];
const GRANT_TYPES: readonly GrantType[] = ["authorization_code", "refresh_token", "client_credentials"];
const MAX_TEXT = 1000;

// ---------------------------------------------------------------- registration

interface ParsedMetadata {
  name: string | null;
  redirectUris: string[];
  grantTypes: GrantType[];
  authMethod: AuthMethod;
  scopes: Scope[] | null;
  /** The metadata as the server will hold and echo it (recognised fields only). */
  metadata: Record<string, unknown>;
}

const optionalText = (m: Record<string, unknown>, field: string): string | undefined => {
  const v = m[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "string" || v.length > MAX_TEXT || textProblem(v))
    throw invalidClientMetadata(`${field} must be a string of at most ${MAX_TEXT} characters`);
  return v;
};

const optionalUrl = (m: Record<string, unknown>, field: string): string | undefined => {
  const v = optionalText(m, field);
  if (v === undefined) return undefined;
  const u = URL.parse(v);
  if (!u || (u.protocol !== "https:" && u.protocol !== "http:")) throw invalidClientMetadata(`${field} must be an http(s) URL`);
  return v;
};

function authMethodOf(m: Record<string, unknown>, opts: { allowSecret: boolean; defaultAuthMethod: AuthMethod }): AuthMethod {
  const authMethod = (m.token_endpoint_auth_method ?? opts.defaultAuthMethod) as AuthMethod;
  if (!AUTH_METHODS.includes(authMethod)) throw invalidClientMetadata(`token_endpoint_auth_method must be one of ${AUTH_METHODS.join(", ")}`);
  if (authMethod !== "none" && !opts.allowSecret)
    throw invalidClientMetadata("a client metadata document must use token_endpoint_auth_method none (no shared secret)");
  return authMethod;
}

function grantTypesOf(m: Record<string, unknown>, authMethod: AuthMethod, allowSecret: boolean): GrantType[] {
  const grantTypes = (m.grant_types ?? ["authorization_code"]) as GrantType[];
  if (!Array.isArray(grantTypes) || grantTypes.length === 0 || grantTypes.some((g) => !GRANT_TYPES.includes(g))) {
    throw invalidClientMetadata(`grant_types must be a non-empty array of ${GRANT_TYPES.join(", ")}`);
  }
  if (grantTypes.includes("client_credentials") && authMethod === "none")
    throw invalidClientMetadata("client_credentials needs a confidential client (token_endpoint_auth_method client_secret_basic or client_secret_post)");
  if (grantTypes.includes("client_credentials") && !allowSecret)
    throw invalidClientMetadata("client_credentials is not available to client metadata documents");
  return grantTypes;
}

function responseTypesOf(m: Record<string, unknown>, grantTypes: GrantType[]): unknown[] {
  const responseTypes = m.response_types ?? (grantTypes.includes("authorization_code") ? ["code"] : []);
  if (!Array.isArray(responseTypes) || responseTypes.some((r) => r !== "code")) throw invalidClientMetadata('response_types may only hold "code"');
  if (grantTypes.includes("authorization_code") !== responseTypes.includes("code"))
    throw invalidClientMetadata('response_types "code" goes with grant_types "authorization_code"');
  return responseTypes as unknown[];
}

function redirectUrisOf(m: Record<string, unknown>, grantTypes: GrantType[]): unknown[] {
  const redirect = m.redirect_uris ?? [];
  if (!Array.isArray(redirect) || redirect.length > 20) throw invalidRedirectUri("redirect_uris must be an array of at most 20 URIs");
  if (grantTypes.includes("authorization_code") && redirect.length === 0)
    throw invalidRedirectUri("redirect_uris is required for the authorization_code grant");
  for (const uri of redirect as unknown[]) {
    const problem = redirectUriProblem(uri);
    if (problem) throw invalidRedirectUri(problem);
  }
  return redirect as unknown[];
}

/** The scopes the client may ask for; null (any) when it names none. */
function scopesOf(scope: string | undefined): Scope[] | null {
  if (scope === undefined) return null;
  const asked = scope.split(" ").filter(Boolean);
  const unknown = asked.filter((s) => !(SCOPES as readonly string[]).includes(s));
  if (unknown.length) throw invalidClientMetadata(`unknown scope: ${unknown.join(", ")}`);
  return [...new Set(asked)] as Scope[];
}

/** The descriptive fields (RFC 7591 section 2) that are kept and echoed when present. */
function descriptiveFields(m: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of ["client_uri", "logo_uri", "tos_uri", "policy_uri"]) {
    const v = optionalUrl(m, f);
    if (v !== undefined) out[f] = v;
  }
  for (const f of ["software_id", "software_version"]) {
    const v = optionalText(m, f);
    if (v !== undefined) out[f] = v;
  }
  if (m.contacts !== undefined) {
    if (!Array.isArray(m.contacts) || m.contacts.length > 10 || m.contacts.some((c) => typeof c !== "string" || c.length > 320 || textProblem(c))) {
      throw invalidClientMetadata("contacts must be an array of at most 10 strings");
    }
    out.contacts = m.contacts;
  }
  return out;
}

/** Parses and checks client metadata (RFC 7591 section 2); unknown fields are ignored, as the RFC requires. */
export function parseClientMetadata(raw: unknown, opts: { allowSecret: boolean; defaultAuthMethod: AuthMethod }): ParsedMetadata {
  if (!raw || typeof raw !== "object" || Array.isArray(raw)) throw invalidClientMetadata("the body must be a JSON object of client metadata");
  const m = raw as Record<string, unknown>;
  const authMethod = authMethodOf(m, opts);
  const grantTypes = grantTypesOf(m, authMethod, opts.allowSecret);
  const responseTypes = responseTypesOf(m, grantTypes);
  const redirect = redirectUrisOf(m, grantTypes);
  const scope = optionalText(m, "scope");
  const scopes = scopesOf(scope);
  const name = optionalText(m, "client_name") ?? null;
  const metadata: Record<string, unknown> = {
    redirect_uris: redirect,
    token_endpoint_auth_method: authMethod,
    grant_types: grantTypes,
    response_types: responseTypes,
    ...(name !== null && { client_name: name }),
    ...(scope !== undefined && { scope: scopes!.join(" ") }),
    ...descriptiveFields(m),
  };
  return { name, redirectUris: redirect as string[], grantTypes, authMethod, scopes, metadata };
}

export interface RegisteredClient {
  client: OAuthClient;
  /** Shown once, in the registration response; only its hash is kept. */
  secret: string | null;
}

/**
 * Registers a client (RFC 7591). With an API key (`registrar`) the client
 * belongs to the key's account: it is listed and deleted through /v1/oauth/clients,
 * and client_credentials acts for that account with at most the key's scopes
 * (revoking the key stops it). Without one it belongs to no account: anyone may
 * register a public or confidential client for the authorization code flow,
 * and each person who signs in decides whether to allow it.
 */
export async function registerClient(db: Db, body: unknown, registrar: Principal | null, now = new Date()): Promise<RegisteredClient> {
  const parsed = parseClientMetadata(body, { allowSecret: true, defaultAuthMethod: "client_secret_basic" });
  if (parsed.grantTypes.includes("client_credentials") && registrar?.credential.kind !== "api_key") {
    throw invalidClientMetadata("client_credentials acts for an account: register the client with an API key of that account (Authorization: Bearer cp_...)");
  }
  if (parsed.scopes && registrar) {
    const beyond = parsed.scopes.filter((s) => !registrar.scopes.has(s));
    if (beyond.length) throw invalidClientMetadata(`the registering API key lacks scope: ${beyond.join(", ")}`);
  }
  // A UUIDv7 like every other id: time-ordered, so the account's clients page like everything else.
  const clientId = newId();
  const secret = parsed.authMethod === "none" ? null : newSecret("client_secret");
  const metadata = { ...parsed.metadata, client_name: parsed.name ?? clientId };
  const row = await db
    .insertInto("oauth_clients")
    .values({
      client_id: clientId,
      kind: "registered",
      account_id: registrar?.credential.kind === "api_key" ? registrar.accountId : null,
      api_key_id: registrar?.credential.kind === "api_key" ? registrar.credential.id : null,
      client_name: parsed.name ?? clientId,
      redirect_uris: parsed.redirectUris,
      grant_types: parsed.grantTypes,
      token_endpoint_auth_method: parsed.authMethod,
      scopes: parsed.scopes,
      secret_hash: secret ? hashSecret(secret) : null,
      metadata: JSON.stringify(metadata),
      created_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return { client: toClient(row), secret };
}

/** The RFC 7591 registration response. */
export function registrationResponse(r: RegisteredClient): Record<string, unknown> {
  return {
    client_id: r.client.clientId,
    ...(r.secret && { client_secret: r.secret, client_secret_expires_at: 0 }),
    client_id_issued_at: Math.floor(r.client.createdAt.getTime() / 1000),
    ...r.client.metadata,
  };
}

// ------------------------------------------------- client ID metadata documents

export interface MetadataDocumentOptions {
  /** http:// and loopback or private addresses (development and tests). */
  allowLocal: boolean;
  /** Single flight, remembered failures and the cap on fetches at once (the process's one gate); none: unbounded (unit use). */
  gate?: MetadataFetchGate;
  /** Metadata-document clients with no live grant, not fetched for this many days, are deleted when the gate says it is time. */
  unusedDays?: number;
  timeoutMs?: number;
  maxBytes?: number;
  /** How long a fetched document is used before it is fetched again. */
  cacheSeconds?: number;
}

const CIMD_TIMEOUT_MS = 5000;
const CIMD_MAX_BYTES = 16 * 1024;
const CIMD_CACHE_SECONDS = 600;

/** Whether a client_id names a Client ID Metadata Document (an https URL; http too when local clients are allowed). */
export const isMetadataDocumentId = (clientId: string, allowLocal: boolean): boolean =>
  clientId.startsWith("https://") || (allowLocal && clientId.startsWith("http://"));

function metadataUrlProblem(clientId: string): string | null {
  const u = URL.parse(clientId);
  if (!u) return "the client_id is not a URL";
  if (u.username || u.password) return "the client_id URL must not carry credentials";
  if (u.hash || clientId.includes("#")) return "the client_id URL must not have a fragment";
  if (u.pathname === "/" || u.pathname === "") return "the client_id URL must have a path";
  if (/\/\.\.?(\/|$)/.test(clientId.slice(u.origin.length))) return "the client_id URL must not have dot segments";
  if (u.href !== clientId) return "the client_id URL must be in its normal form";
  return null;
}

/** GET the document, pinned to the addresses the SSRF policy checked, within the size and time limits; no redirects. */
async function fetchDocument(url: string, opts: MetadataDocumentOptions): Promise<unknown> {
  let addresses: string[];
  try {
    ({ addresses } = await inspectCloneUrl(url, { allowLocal: opts.allowLocal }));
  } catch (err) {
    if (err instanceof DomainValidationError) throw invalidClient(`client metadata document refused: ${err.issues[0]?.msg ?? "not allowed"}`);
    throw invalidClient("client metadata document could not be fetched: its host could not be resolved");
  }
  const u = new URL(url);
  const pinned = addresses[0];
  const get = u.protocol === "https:" ? https.get : http.get;
  const timeoutMs = opts.timeoutMs ?? CIMD_TIMEOUT_MS;
  const maxBytes = opts.maxBytes ?? CIMD_MAX_BYTES;
  const text = await new Promise<string>((resolve, reject) => {
    const fail = (msg: string) => reject(invalidClient(`client metadata document could not be fetched: ${msg}`));
    const req = get(
      url,
      {
        headers: { accept: "application/json" },
        timeout: timeoutMs,
        ...(pinned && {
          lookup: (_host: string, _o: unknown, cb: (err: Error | null, address: string, family: number) => void) => cb(null, pinned, isIP(pinned)),
        }),
      },
      (res) => {
        if (res.statusCode !== 200) {
          res.resume();
          return fail(`HTTP ${res.statusCode}`);
        }
        const chunks: Buffer[] = [];
        let size = 0;
        res.on("data", (c: Buffer) => {
          size += c.length;
          if (size > maxBytes) {
            req.destroy();
            fail(`larger than ${maxBytes} bytes`);
          } else chunks.push(c);
        });
        res.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
        res.on("error", () => fail("the connection failed"));
      },
    );
    const timer = setTimeout(() => {
      req.destroy();
      fail(`no answer within ${timeoutMs} ms`);
    }, timeoutMs);
    req.on("close", () => clearTimeout(timer));
    req.on("timeout", () => {
      req.destroy();
      fail(`no answer within ${timeoutMs} ms`);
    });
    req.on("error", () => fail("the connection failed"));
  });
  try {
    return JSON.parse(text);
  } catch {
    throw invalidClient("client metadata document is not JSON");
  }
}

async function loadMetadataDocument(db: Db, clientId: string, opts: MetadataDocumentOptions, now: Date): Promise<OAuthClient> {
  const cached = await db.selectFrom("oauth_clients").selectAll().where("client_id", "=", clientId).where("kind", "=", "metadata_document").executeTakeFirst();
  const ttl = (opts.cacheSeconds ?? CIMD_CACHE_SECONDS) * 1000;
  if (cached && cached.deleted_at === null && cached.fetched_at && now.getTime() - cached.fetched_at.getTime() < ttl) return toClient(cached);
  const problem = metadataUrlProblem(clientId);
  if (problem) throw invalidClient(problem);
  const client = opts.gate ? await opts.gate.run(clientId, () => fetchAndStore(db, clientId, opts, now)) : await fetchAndStore(db, clientId, opts, now);
  if (opts.gate?.pruneDue() && opts.unusedDays) await pruneUnusedMetadataClients(db, opts.unusedDays, now);
  return client;
}

/**
 * Deletes metadata-document clients no live grant names and that were not
 * fetched for `unusedDays` (one in use is fetched again every
 * CIMD_CACHE_SECONDS): anyone can create such rows by naming a URL, and
 * nothing else would ever remove them. Returns how many.
 */
export async function pruneUnusedMetadataClients(db: Db, unusedDays: number, now = new Date()): Promise<number> {
  const before = new Date(now.getTime() - unusedDays * 86_400_000);
  const r = await db
    .deleteFrom("oauth_clients")
    .where("kind", "=", "metadata_document")
    .where((eb) => eb.or([eb("fetched_at", "is", null), eb("fetched_at", "<", before)]))
    .where((eb) =>
      eb.not(
        eb.exists(eb.selectFrom("oauth_grants as g").select("g.id").whereRef("g.client_id", "=", "oauth_clients.client_id").where("g.revoked_at", "is", null)),
      ),
    )
    .executeTakeFirst();
  return Number(r.numDeletedRows);
}

async function fetchAndStore(db: Db, clientId: string, opts: MetadataDocumentOptions, now: Date): Promise<OAuthClient> {
  const doc = await fetchDocument(clientId, opts);
  let parsed: ParsedMetadata;
  try {
    parsed = parseClientMetadata(doc, { allowSecret: false, defaultAuthMethod: "none" });
  } catch (err) {
    throw invalidClient(`client metadata document is invalid: ${(err as Error).message}`);
  }
  if ((doc as Record<string, unknown>).client_id !== clientId) throw invalidClient("client metadata document's client_id is not its own URL");
  const name = parsed.name ?? new URL(clientId).host;
  const values = {
    client_name: name,
    redirect_uris: parsed.redirectUris,
    grant_types: parsed.grantTypes,
    token_endpoint_auth_method: parsed.authMethod,
    scopes: parsed.scopes,
    metadata: JSON.stringify({ ...parsed.metadata, client_id: clientId, client_name: name }),
    fetched_at: now,
    deleted_at: null,
  };
  const row = await db
    .insertInto("oauth_clients")
    .values({ client_id: clientId, kind: "metadata_document", account_id: null, api_key_id: null, secret_hash: null, ...values })
    .onConflict((oc) => oc.column("client_id").doUpdateSet(values))
    .returningAll()
    .executeTakeFirstOrThrow();
  return toClient(row);
}

/** A live client by its id: a registered one, or a metadata document (fetched or from the cache). Null when unknown. */
export async function findClient(db: Db, clientId: string, opts: MetadataDocumentOptions, now = new Date()): Promise<OAuthClient | null> {
  if (clientId.length > 2000 || textProblem(clientId)) return null;
  if (isMetadataDocumentId(clientId, opts.allowLocal)) return loadMetadataDocument(db, clientId, opts, now);
  const row = await db
    .selectFrom("oauth_clients")
    .selectAll()
    .where("client_id", "=", clientId)
    .where("kind", "=", "registered")
    .where("deleted_at", "is", null)
    .executeTakeFirst();
  return row ? toClient(row) : null;
}

export interface PresentedCredentials {
  clientId: string | null;
  secret: string | null;
  /** How the client presented itself. */
  via: "basic" | "post" | "none";
}

/** Client credentials from HTTP Basic (RFC 6749 2.3.1: form-encoded id and secret) or the body. */
export function presentedCredentials(authorization: string | undefined, body: Record<string, string>): PresentedCredentials {
  if (authorization && /^basic /i.test(authorization)) {
    const decoded = Buffer.from(authorization.slice(6).trim(), "base64").toString("utf8");
    const at = decoded.indexOf(":");
    if (at < 0) throw invalidClient("malformed Basic credentials", true);
    if (body.client_secret !== undefined) throw invalidClient("use one way of authenticating the client, not two", true);
    if (body.client_id !== undefined && body.client_id !== safeDecode(decoded.slice(0, at)))
      throw invalidClient("client_id differs from the Basic credentials", true);
    return { clientId: safeDecode(decoded.slice(0, at)), secret: safeDecode(decoded.slice(at + 1)), via: "basic" };
  }
  if (body.client_secret !== undefined) return { clientId: body.client_id ?? null, secret: body.client_secret, via: "post" };
  return { clientId: body.client_id ?? null, secret: null, via: "none" };
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s.replace(/\+/g, " "));
  } catch {
    throw invalidClient("malformed Basic credentials", true);
  }
}

/**
 * Authenticates a client at the token, revocation and introspection
 * endpoints, as discovery advertises for each of them: a confidential client
 * always proves its secret, PKCE or not, with HTTP Basic or in the body
 * whichever it registered (clients such as authlib send Basic to the
 * revocation endpoint whatever they registered); a public client sends none.
 */
export async function authenticateClient(db: Db, presented: PresentedCredentials, opts: MetadataDocumentOptions): Promise<OAuthClient> {
  const basic = presented.via === "basic";
  if (!presented.clientId) throw invalidClient("client authentication failed: no client_id", basic);
  let client: OAuthClient | null;
  try {
    client = await findClient(db, presented.clientId, opts);
  } catch (err) {
    // Too many fetches at once is the server's state, not the client's fault: said as such (503).
    if (err instanceof OAuthProblem && err.status === 503) throw err;
    client = null;
  }
  if (!client) throw invalidClient("client authentication failed: unknown client", basic);
  // A confidential client proves its secret either way the metadata advertises (Basic or the body: the same
  // secret, so neither is weaker); its registered method is the one it prefers. A public client sends none.
  const confidential = client.authMethod !== "none";
  if (confidential && presented.via === "none")
    throw invalidClient("client authentication failed: this client authenticates with its secret (client_secret_basic or client_secret_post)", basic);
  if (!confidential && presented.via !== "none") throw invalidClient("client authentication failed: this client is public and sends no secret", basic);
  if (confidential && !(presented.secret && client.secretHash && sameText(hashSecret(presented.secret), client.secretHash))) {
    throw invalidClient("client authentication failed", basic);
  }
  return client;
}
