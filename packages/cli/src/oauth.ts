import { createHash, randomBytes } from "node:crypto";
import { createServer } from "node:http";
import { hostname } from "node:os";
import type { Credential } from "./config.ts";
import { CliError, EXIT, oauthMessage } from "./errors.ts";

// Signing in in the browser, as a native app does (RFC 8252): discovery
// (RFC 8414), a public client registered for this sign-in (RFC 7591,
// token_endpoint_auth_method "none"), a loopback redirect URI on a port the
// system picks (the server accepts any port on a loopback host), PKCE S256
// and state, the issuer checked (RFC 9207), and the code traded for an
// access and a refresh token.

interface Metadata {
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
  registration_endpoint?: string;
  revocation_endpoint?: string;
  scopes_supported?: string[];
}

const b64url = (buf: Buffer) => buf.toString("base64url");

async function postJson(url: string, body: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json", accept: "application/json" }, body: JSON.stringify(body) });
  const out = (await res.json().catch(() => ({}))) as Record<string, unknown>;
  if (!res.ok) throw new CliError(`${url}: ${res.status} ${oauthMessage(out, "")}`);
  return out;
}

async function postForm(url: string, form: Record<string, string>): Promise<Record<string, unknown>> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", accept: "application/json" },
    body: new URLSearchParams(form).toString(),
  });
  const out = (await res.json().catch(() => ({}))) as Record<string, unknown>;
  if (!res.ok) throw new CliError(`${url}: ${res.status} ${oauthMessage(out, "")}`);
  return out;
}

const PAGE = (title: string, text: string) =>
  `<!doctype html><meta charset="utf-8"><title>${title}</title><body style="font-family:sans-serif;margin:4em"><h1>${title}</h1><p>${text}</p></body>`;
const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export interface BrowserSignIn {
  base: string;
  scopes: string[] | null;
  /** Shows the authorization URL to the person: opens a browser, or prints it. */
  open(url: string): Promise<void>;
  signal?: AbortSignal;
  /** How long to wait for the browser to come back (default 5 minutes). */
  timeoutMs?: number;
}

export async function browserSignIn(o: BrowserSignIn): Promise<Extract<Credential, { type: "oauth" }>> {
  const metaRes = await fetch(`${o.base}/.well-known/oauth-authorization-server`, { headers: { accept: "application/json" } }).catch((err: Error) => {
    throw new CliError(`cannot reach ${o.base}: ${(err.cause as Error | undefined)?.message ?? err.message}`);
  });
  if (!metaRes.ok) throw new CliError(`${o.base} has no OAuth authorization server metadata (${metaRes.status}): sign in with --api-key-stdin`);
  const meta = (await metaRes.json()) as Metadata;
  if (!meta.registration_endpoint) throw new CliError(`${o.base} does not let clients register: sign in with --api-key-stdin`);

  const state = b64url(randomBytes(24));
  const verifier = b64url(randomBytes(48));
  const challenge = b64url(createHash("sha256").update(verifier).digest());

  let settle: (v: { code: string } | { error: string }) => void = () => {};
  const result = new Promise<{ code: string } | { error: string }>((resolve) => (settle = resolve));
  const server = createServer((req, res) => {
    const u = new URL(req.url ?? "/", "http://127.0.0.1");
    if (u.pathname !== "/callback") {
      res.writeHead(404).end();
      return;
    }
    const p = u.searchParams;
    let outcome: { code: string } | { error: string };
    if (p.get("state") !== state) outcome = { error: "the answer's state is not this sign-in's (another sign-in in the same browser?)" };
    else if (p.get("iss") !== null && p.get("iss") !== meta.issuer) outcome = { error: `the answer came from ${p.get("iss")}, not ${meta.issuer}` };
    else if (p.get("error")) outcome = { error: `${p.get("error")}${p.get("error_description") ? `: ${p.get("error_description")}` : ""}` };
    else if (!p.get("code")) outcome = { error: "the answer has no code" };
    else outcome = { code: p.get("code")! };
    res.writeHead("code" in outcome ? 200 : 400, { "content-type": "text/html; charset=utf-8" });
    res.end("code" in outcome ? PAGE("Signed in", "You can close this tab and go back to the terminal.") : PAGE("Not signed in", escapeHtml(outcome.error)));
    settle(outcome);
  });
  await new Promise<void>((resolve, reject) => server.once("error", reject).listen(0, "127.0.0.1", resolve));
  try {
    const port = (server.address() as { port: number }).port;
    const redirectUri = `http://127.0.0.1:${port}/callback`;
    const client = await postJson(meta.registration_endpoint, {
      client_name: `cpl (codeplane command line) on ${hostname()}`,
      // Registered without a port: any port on the loopback host matches (RFC 8252 7.3).
      redirect_uris: ["http://127.0.0.1/callback"],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    });
    const clientId = String(client.client_id);
    const scopes = o.scopes ?? meta.scopes_supported ?? null;
    const authorize = new URL(meta.authorization_endpoint);
    for (const [k, v] of Object.entries({
      response_type: "code",
      client_id: clientId,
      redirect_uri: redirectUri,
      state,
      code_challenge: challenge,
      code_challenge_method: "S256",
      resource: meta.issuer,
      ...(scopes && { scope: scopes.join(" ") }),
    })) {
      authorize.searchParams.set(k, v);
    }
    await o.open(authorize.href);
    const timeout = new Promise<{ error: string }>((resolve) => {
      const t = setTimeout(() => resolve({ error: "no answer from the browser in time" }), o.timeoutMs ?? 300_000);
      t.unref();
      o.signal?.addEventListener("abort", () => resolve({ error: "interrupted" }), { once: true });
    });
    const answer = await Promise.race([result, timeout]);
    if ("error" in answer) throw new CliError(`not signed in: ${answer.error}`, EXIT.auth);
    const tokens = await postForm(meta.token_endpoint, {
      grant_type: "authorization_code",
      code: answer.code,
      code_verifier: verifier,
      redirect_uri: redirectUri,
      client_id: clientId,
      resource: meta.issuer,
    });
    return {
      type: "oauth",
      client_id: clientId,
      token_endpoint: meta.token_endpoint,
      revocation_endpoint: meta.revocation_endpoint ?? null,
      access_token: String(tokens.access_token),
      refresh_token: typeof tokens.refresh_token === "string" ? tokens.refresh_token : null,
      expires_at: typeof tokens.expires_in === "number" ? Date.now() + tokens.expires_in * 1000 : null,
      scope: typeof tokens.scope === "string" ? tokens.scope : null,
    };
  } finally {
    server.close();
    server.closeAllConnections();
  }
}

/** Revokes an OAuth credential's refresh token (its whole family) or access token; errors are not fatal to a logout. */
export async function revoke(c: Extract<Credential, { type: "oauth" }>): Promise<boolean> {
  if (!c.revocation_endpoint) return false;
  try {
    await postForm(c.revocation_endpoint, { token: c.refresh_token ?? c.access_token, client_id: c.client_id });
    return true;
  } catch {
    return false;
  }
}

/** Opens a URL in the person's browser: $BROWSER, else the system's opener. */
export async function openInBrowser(url: string, env: Record<string, string | undefined>): Promise<boolean> {
  const { spawn } = await import("node:child_process");
  const command = env.BROWSER ?? (process.platform === "darwin" ? "open" : process.platform === "win32" ? "explorer" : "xdg-open");
  return new Promise((resolve) => {
    const child = spawn(command, [url], { stdio: "ignore", detached: true });
    child.once("error", () => resolve(false));
    child.once("spawn", () => {
      child.unref();
      resolve(true);
    });
  });
}
