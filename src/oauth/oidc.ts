import { createCipheriv, createDecipheriv, createHmac, randomBytes } from "node:crypto";
import { sql } from "kysely";
import * as client from "openid-client";
import type { OidcConfig } from "../config.ts";
import type { Db } from "../db/database.ts";
import { generateApiKey } from "../domain/auth/api-key-token.ts";
import { SCOPES, type Scope } from "../domain/auth/scopes.ts";
import { newId } from "../domain/shared/ids.ts";

// Sign-in through an upstream OpenID Connect provider (CODEPLANE_OIDC_*).
//
// The authorization page's "Sign in with <provider>" button starts an
// authorization code flow with PKCE, state and nonce at the provider; the
// provider sends the browser back to {base_url}/oauth/oidc/callback, where
// openid-client redeems the code and validates the ID token (signature,
// issuer, audience, nonce, expiry). What the flow needs between the two
// requests (state, nonce, PKCE verifier, where to go back to) travels in an
// HttpOnly cookie, sealed with AES-256-GCM under a key derived from the
// encryption key, and bound to the browser's pre-login cookie: a callback
// from another browser, a replayed or altered state, or a stale one (over
// ten minutes) is refused.
//
// A person signed in this way holds no API key, but every grant, token and
// session in src/oauth derives from one (revoking it ends them all). So the
// first sign-in of an upstream identity (issuer + subject) mints a "sign-in
// key" for the account it maps to: an API key whose secret is generated and
// thrown away (it can never be presented), named after the identity, with
// the configured scopes, expiring a refresh-token lifetime after the
// identity's last upstream sign-in (each sign-in extends it). It is listed
// among the account's keys and revoking it signs that person out everywhere.

/** A sign-in the provider or the mapping refused; `message` is for the person. */
export class OidcRefusal extends Error {
  readonly status: number;
  /** For the audit log. */
  readonly reason: string;
  constructor(message: string, status: number, reason: string) {
    super(message);
    this.status = status;
    this.reason = reason;
  }
}

export const OIDC_CALLBACK_PATH = "/oauth/oidc/callback";
/** How long a started sign-in may take at the provider. */
export const OIDC_FLOW_SECONDS = 600;

/** Every scope but keys:write: a person signed in upstream cannot mint keys or manage OAuth clients and grants unless the operator says so. */
export const DEFAULT_OIDC_SCOPES: readonly Scope[] = SCOPES.filter((s) => s !== "keys:write");

const LOOPBACK = /^(127\.\d{1,3}\.\d{1,3}\.\d{1,3}|localhost|\[::1\])$/;

interface FlowState {
  /** state, nonce, PKCE verifier */
  s: string;
  n: string;
  v: string;
  /** the pre-login cookie it is bound to */
  l: string;
  /** the local path to go back to */
  r: string;
  /** expiry, epoch seconds */
  e: number;
}

export interface OidcIdentity {
  accountId: string;
  accountName: string;
  apiKeyId: string;
  subject: string;
  /** What the person is called in the key's name and the log: the email, else the subject. */
  label: string;
  returnTo: string;
}

export class OidcSignIn {
  readonly providerName: string;
  readonly scopes: readonly Scope[];
  readonly #cfg: OidcConfig;
  readonly #db: Db;
  readonly #sealKey: Buffer;
  readonly #keySeconds: number;
  #discovered: Promise<client.Configuration> | null = null;
  /** When discovery last failed: the sign-in page does not wait on a provider that is down (the button still tries). */
  #failedAt = 0;

  constructor(o: { config: OidcConfig; db: Db; secret: Buffer; keySeconds: number }) {
    this.#cfg = o.config;
    this.#db = o.db;
    this.#sealKey = createHmac("sha256", o.secret).update("codeplane oidc flow state").digest();
    this.#keySeconds = o.keySeconds;
    this.providerName = o.config.providerName;
    if (o.config.scopes) {
      const unknown = o.config.scopes.filter((s) => !(SCOPES as readonly string[]).includes(s));
      if (unknown.length) throw new Error(`CODEPLANE_OIDC_SCOPES: unknown scope ${unknown.join(", ")} (known: ${SCOPES.join(" ")})`);
      if (o.config.scopes.length === 0) throw new Error("CODEPLANE_OIDC_SCOPES: no scope");
    }
    this.scopes = o.config.scopes ? SCOPES.filter((s) => o.config.scopes!.includes(s)) : DEFAULT_OIDC_SCOPES;
  }

  /** The provider's metadata, discovered on first use (the server starts while the provider is down); a failure is retried next time. */
  #configuration(): Promise<client.Configuration> {
    if (!this.#discovered) {
      const issuer = new URL(this.#cfg.issuer);
      // openid-client refuses plain http; allowed only for a loopback issuer (config.ts refuses any other http issuer).
      const insecure = issuer.protocol === "http:" && LOOPBACK.test(issuer.hostname);
      this.#discovered = client.discovery(issuer, this.#cfg.clientId, undefined, client.ClientSecretBasic(this.#cfg.clientSecret), {
        timeout: 10,
        ...(insecure && { execute: [client.allowInsecureRequests] }),
      });
      this.#discovered.catch(() => {
        this.#discovered = null;
        this.#failedAt = Date.now();
      });
    }
    return this.#discovered;
  }

  /** The origin of the provider's authorization endpoint (the sign-in page's form may redirect there); null while it cannot be discovered. */
  async authorizationOrigin(): Promise<string | null> {
    if (!this.#discovered && Date.now() - this.#failedAt < 30_000) return null;
    try {
      const md = (await this.#configuration()).serverMetadata();
      return md.authorization_endpoint ? new URL(md.authorization_endpoint).origin : null;
    } catch {
      return null;
    }
  }

  /** Starts a sign-in: the provider's URL to send the browser to, and the sealed flow state for the cookie. */
  async start(baseUrl: string, loginNonce: string, returnTo: string): Promise<{ url: string; sealed: string }> {
    if (!isLocalPath(returnTo)) throw new Error("returnTo must be a local path");
    let config: client.Configuration;
    try {
      config = await this.#configuration();
    } catch (err) {
      throw new OidcRefusal(`${this.providerName} cannot be reached right now (${(err as Error).message}). Try again later.`, 502, "discovery_failed");
    }
    const flow: FlowState = {
      s: client.randomState(),
      n: client.randomNonce(),
      v: client.randomPKCECodeVerifier(),
      l: loginNonce,
      r: returnTo,
      e: Math.floor(Date.now() / 1000) + OIDC_FLOW_SECONDS,
    };
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: `${baseUrl}${OIDC_CALLBACK_PATH}`,
      scope: this.#cfg.upstreamScopes.join(" "),
      state: flow.s,
      nonce: flow.n,
      code_challenge: await client.calculatePKCECodeChallenge(flow.v),
      code_challenge_method: "S256",
    });
    return { url: url.href, sealed: this.#seal(flow) };
  }

  /** Finishes a sign-in at the callback: the ID token validated, the account found, the sign-in key ready. */
  async finish(baseUrl: string, loginNonce: string | undefined, sealed: string | undefined, query: string): Promise<OidcIdentity> {
    const flow = sealed ? this.#unseal(sealed) : null;
    if (!flow)
      throw new OidcRefusal("This sign-in was not started in this browser, or it was altered. Start again from the application.", 403, "no_flow_state");
    if (flow.e < Date.now() / 1000) throw new OidcRefusal("This sign-in took too long. Start again from the application.", 403, "flow_expired");
    if (!loginNonce || loginNonce !== flow.l)
      throw new OidcRefusal("This sign-in was not started in this browser. Start again from the application.", 403, "login_cookie_mismatch");
    const config = await this.#configuration().catch((err: Error) => {
      throw new OidcRefusal(`${this.providerName} cannot be reached right now (${err.message}). Try again later.`, 502, "discovery_failed");
    });
    const current = new URL(`${baseUrl}${OIDC_CALLBACK_PATH}`);
    current.search = query;
    let claims: client.IDToken;
    try {
      const tokens = await client.authorizationCodeGrant(config, current, {
        pkceCodeVerifier: flow.v,
        expectedState: flow.s,
        expectedNonce: flow.n,
        idTokenExpected: true,
      });
      claims = tokens.claims()!;
    } catch (err) {
      if (err instanceof client.AuthorizationResponseError) {
        throw new OidcRefusal(`${this.providerName} did not sign you in: ${err.error_description ?? err.error}.`, 403, `provider_${err.error}`);
      }
      const code = (err as { code?: string }).code;
      throw new OidcRefusal(
        `The answer from ${this.providerName} could not be accepted (${(err as Error).message}). Start again from the application.`,
        403,
        code ? `rejected_${code}` : "rejected",
      );
    }
    const account = await this.#account(claims);
    const label = typeof claims.email === "string" && claims.email ? claims.email : claims.sub;
    const apiKeyId = await this.#signInKey(account.id, claims.iss, claims.sub, label);
    return { accountId: account.id, accountName: account.name, apiKeyId, subject: claims.sub, label, returnTo: flow.r };
  }

  /** The account the configured claim names (see docs/users/oauth.md); never created here. */
  async #account(claims: client.IDToken): Promise<{ id: string; name: string }> {
    const claim = this.#cfg.accountClaim;
    const { values, names } = accountNames(claims, this.#cfg);
    const unknown = () =>
      new OidcRefusal(
        `You signed in to ${this.providerName}, but no codeplane account is set up for you (${claim}: ${values.length ? values.join(", ") : "none"}). Ask the operator of this codeplane.`,
        403,
        "no_account",
      );
    if (names.length === 0) throw unknown();
    const rows = await this.#db.selectFrom("accounts").select(["id", "name"]).where("name", "in", names).execute();
    if (rows.length === 0) throw unknown();
    if (rows.length > 1) {
      throw new OidcRefusal(
        `Your ${claim} names more than one codeplane account (${rows.map((r) => r.name).join(", ")}); codeplane cannot choose. Ask the operator to set CODEPLANE_OIDC_ACCOUNTS.`,
        403,
        "ambiguous_account",
      );
    }
    return rows[0]!;
  }

  /** The identity's sign-in key in the account: found (scopes and expiry brought up to date) or minted. */
  async #signInKey(accountId: string, issuer: string, subject: string, label: string): Promise<string> {
    const marker = `oidc ${subject} @ ${issuer}`;
    const name = `${marker} (${label})`.slice(0, 200);
    const expiresAt = new Date(Date.now() + this.#keySeconds * 1000);
    const scopes = [...this.scopes];
    return this.#db.transaction().execute(async (tx) => {
      // One live key per identity and account; the lock keeps two concurrent first sign-ins from minting two.
      await sql`select pg_advisory_xact_lock(hashtext(${`${accountId} ${marker}`}))`.execute(tx);
      const live = await tx
        .selectFrom("api_keys")
        .select(["id"])
        .where("account_id", "=", accountId)
        .where(sql<boolean>`left(name, ${marker.length + 2}) = ${`${marker} (`}`)
        .where("revoked_at", "is", null)
        .where("parent_id", "is", null)
        .where((eb) => eb.or([eb("expires_at", "is", null), eb("expires_at", ">", new Date())]))
        .executeTakeFirst();
      if (live) {
        await tx.updateTable("api_keys").set({ name, scopes, expires_at: expiresAt }).where("id", "=", live.id).execute();
        return live.id;
      }
      const { prefix, hash } = generateApiKey(); // the key itself is never kept nor shown: nobody can present it
      const id = newId();
      await tx
        .insertInto("api_keys")
        .values({ id, account_id: accountId, name, prefix, key_hash: hash, scopes, expires_at: expiresAt, parent_id: null })
        .execute();
      return id;
    });
  }

  #seal(flow: FlowState): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", this.#sealKey, iv);
    const body = Buffer.concat([cipher.update(JSON.stringify(flow), "utf8"), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), body]).toString("base64url");
  }

  #unseal(sealed: string): FlowState | null {
    try {
      const raw = Buffer.from(sealed, "base64url");
      if (raw.length < 29) return null;
      const decipher = createDecipheriv("aes-256-gcm", this.#sealKey, raw.subarray(0, 12));
      decipher.setAuthTag(raw.subarray(12, 28));
      const flow = JSON.parse(Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString("utf8")) as FlowState;
      return typeof flow.s === "string" && typeof flow.r === "string" && isLocalPath(flow.r) ? flow : null;
    } catch {
      return null;
    }
  }
}

/**
 * The account names an ID token's claims point to, by the configured claim and
 * mapping: `values` are what the claim says (an email's domain, or a claim's
 * strings), `names` the account names they map to (none: no account).
 */
export function accountNames(
  claims: Record<string, unknown>,
  cfg: Pick<OidcConfig, "accountClaim" | "accounts" | "providerName">,
): { values: string[]; names: string[] } {
  const claim = cfg.accountClaim;
  let values: string[];
  if (claim === "email") {
    const email = claims.email;
    if (typeof email !== "string" || !email.includes("@"))
      throw new OidcRefusal(`${cfg.providerName} did not tell codeplane your email address, so no account can be chosen.`, 403, "no_email");
    if (claims.email_verified !== true)
      throw new OidcRefusal(`${cfg.providerName} has not verified your email address (${email}), so no account can be chosen by it.`, 403, "email_unverified");
    values = [email.slice(email.lastIndexOf("@") + 1).toLowerCase()];
  } else {
    const v = claims[claim];
    values = typeof v === "string" ? [v] : Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : [];
  }
  if (!cfg.accounts) return { values, names: values };
  const norm = (s: string) => (claim === "email" ? s.toLowerCase() : s);
  const hit = cfg.accounts.find(([value]) => values.includes(norm(value)));
  return { values, names: hit ? [hit[1]] : [] };
}

/** A path on this server (no scheme, no host, no protocol-relative `//`, no backslash tricks): where a finished sign-in may go. */
export const isLocalPath = (p: string): boolean => p.startsWith("/") && !p.startsWith("//") && !p.includes("\\") && !/[\u0000-\u001f]/.test(p);
