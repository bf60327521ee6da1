// Redirect URIs: what registration accepts and how a request's URI is matched.
//
// Accepted: https:// URLs, and http:// URLs on a loopback host (127.0.0.1,
// [::1], localhost) for native clients (RFC 8252 7.3). Never a fragment or
// credentials. Matching is exact string comparison, except that a loopback
// URI may use any port (RFC 8252 7.3: native apps get an ephemeral port).

const LOOPBACK_HOSTS = new Set(["127.0.0.1", "[::1]", "localhost"]);

/** Why a redirect URI cannot be registered, or null when it can. */
export function redirectUriProblem(value: unknown): string | null {
  if (typeof value !== "string" || value === "") return "redirect_uris must be non-empty strings";
  if (value.length > 2000) return "a redirect URI is longer than 2000 characters";
  if (/[\x00-\x20\x7f]/.test(value)) return "a redirect URI contains spaces or control characters";
  const u = URL.parse(value);
  if (!u) return `not an absolute URL: ${value}`;
  if (u.hash || value.includes("#")) return `a redirect URI must not have a fragment: ${value}`;
  if (u.username || u.password) return `a redirect URI must not carry credentials: ${value}`;
  if (u.protocol === "https:") return u.hostname ? null : `no host: ${value}`;
  if (u.protocol === "http:")
    return LOOPBACK_HOSTS.has(u.hostname) ? null : `http:// is allowed only on a loopback host (127.0.0.1, [::1], localhost): ${value}`;
  return `a redirect URI must be https://, or http:// on a loopback host: ${value}`;
}

export const isLoopbackRedirect = (uri: string): boolean => {
  const u = URL.parse(uri);
  return !!u && u.protocol === "http:" && LOOPBACK_HOSTS.has(u.hostname);
};

/** The registered URI the requested one matches, or null. */
export function matchRedirectUri(registered: readonly string[], requested: string): string | null {
  if (registered.includes(requested)) return requested;
  const r = URL.parse(requested);
  if (!r || !isLoopbackRedirect(requested) || requested.includes("#")) return null;
  for (const candidate of registered) {
    if (!isLoopbackRedirect(candidate)) continue;
    const c = new URL(candidate);
    // Everything but the port: scheme, host, path and query exactly as registered.
    if (c.hostname === r.hostname && c.pathname === r.pathname && c.search === r.search && !r.username && !r.password) return requested;
  }
  return null;
}
