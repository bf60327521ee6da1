import * as oauth from "oauth4webapi";

// A browser as far as the authorization page needs one: cookies (by name, for
// this one origin), manual redirects, forms read from the HTML and posted back.

export class FormBrowser {
  readonly cookies = new Map<string, string>();

  async fetch(url: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    if (this.cookies.size) headers.set("cookie", [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; "));
    const res = await fetch(url, { ...init, headers, redirect: "manual" });
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(";");
      const at = pair!.indexOf("=");
      this.cookies.set(pair!.slice(0, at).trim(), pair!.slice(at + 1).trim());
    }
    return res;
  }

  /** Posts the page's form with its hidden fields (CSRF token included) and `extra`. */
  async submit(base: string, html: string, extra: Record<string, string>, override: Record<string, string> = {}): Promise<Response> {
    const fields = { ...hiddenFields(html), ...extra, ...override };
    return this.fetch(`${base}/oauth/authorize`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(fields).toString(),
    });
  }
}

export function hiddenFields(html: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of html.matchAll(/<input type="hidden" name="([^"]*)" value="([^"]*)">/g)) {
    out[unescape(m[1]!)] = unescape(m[2]!);
  }
  return out;
}

const unescape = (s: string) =>
  s
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&amp;/g, "&");

export const insecure = { [oauth.allowInsecureRequests]: true } as const;

export async function discover(base: string): Promise<oauth.AuthorizationServer> {
  const issuer = new URL(base);
  return oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: "oauth2", ...insecure }));
}

export interface AuthorizeOptions {
  clientId: string;
  redirectUri: string;
  challenge: string;
  state?: string;
  scope?: string;
  resource?: string;
  extra?: Record<string, string>;
}

export function authorizationUrl(as: oauth.AuthorizationServer, o: AuthorizeOptions): string {
  const u = new URL(as.authorization_endpoint!);
  u.searchParams.set("response_type", "code");
  u.searchParams.set("client_id", o.clientId);
  u.searchParams.set("redirect_uri", o.redirectUri);
  u.searchParams.set("code_challenge", o.challenge);
  u.searchParams.set("code_challenge_method", "S256");
  if (o.state) u.searchParams.set("state", o.state);
  if (o.scope) u.searchParams.set("scope", o.scope);
  if (o.resource) u.searchParams.set("resource", o.resource);
  for (const [k, v] of Object.entries(o.extra ?? {})) u.searchParams.set(k, v);
  return u.href;
}

/** The whole page flow: the sign-in form with the API key, then Allow (or Deny). Returns the redirect back to the client. */
export async function signInAndDecide(browser: FormBrowser, base: string, url: string, apiKey: string, decision: "allow" | "deny" = "allow"): Promise<URL> {
  const page = await browser.fetch(url);
  if (page.status !== 200) throw new Error(`authorization page answered ${page.status}: ${await page.text()}`);
  let html = await page.text();
  if (html.includes('name="api_key"')) {
    const signedIn = await browser.submit(base, html, { api_key: apiKey });
    if (signedIn.status !== 303) throw new Error(`sign-in answered ${signedIn.status}: ${await signedIn.text()}`);
    const next = await browser.fetch(new URL(signedIn.headers.get("location")!, base).href);
    if (next.status === 302) return new URL(next.headers.get("location")!);
    html = await next.text();
  }
  const decided = await browser.submit(base, html, { decision });
  if (decided.status !== 303) throw new Error(`consent answered ${decided.status}: ${await decided.text()}`);
  return new URL(decided.headers.get("location")!);
}
