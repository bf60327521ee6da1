import type { Context } from "koa";

// The base URL ({base_url} in the contract): the issuer, the protected
// resource, the audience of access tokens, and what every endpoint in the
// metadata starts with.
//
// CODEPLANE_PUBLIC_URL decides it when set (production: set it). Otherwise it
// is derived from each request: the scheme Koa sees (https only on a TLS
// socket, or from X-Forwarded-Proto when CODEPLANE_TRUST_PROXY is set) and the
// Host header (X-Forwarded-Host behind a trusted proxy). A Host that is not a
// plain host[:port] gives no base URL, and the OAuth endpoints answer 400.
// Tokens are bound to the base URL they were issued under, so a token issued
// through one host name does not work through another.

const HOST_RE = /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,62})?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,62})?)*\.?|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?$/;

export function baseUrlOf(ctx: Context, publicUrl: string | null): string | null {
  if (publicUrl) return publicUrl;
  const host = ctx.host;
  if (!host || host.length > 261 || !HOST_RE.test(host)) return null;
  const proto = ctx.protocol === "https" ? "https" : "http";
  return `${proto}://${host.toLowerCase()}`;
}

/** Where a 401 points clients to (RFC 9728). */
export const resourceMetadataUrl = (baseUrl: string): string => `${baseUrl}/.well-known/oauth-protected-resource`;
