import type { Context } from "koa";
import { describe, expect, it } from "vitest";
import type { Principal } from "../../domain/auth/scopes.ts";
import { HttpError } from "../http-error.ts";
import { authenticateSession } from "./auth.ts";

// The dashboard's session cookie as a /v1 credential: same-origin only, never
// beside a bearer token, and with the session's CSRF token on unsafe methods.

const BASE = "https://codeplane.example.test";
const principal: Principal = { accountId: "a", scopes: new Set(), credential: { kind: "api_key", id: "k" } };
const TOKEN = "csrf-of-the-session";

async function call(method: string, headers: Record<string, string>) {
  const lookups: string[] = [];
  const mw = authenticateSession(
    async (cookie, baseUrl) => (lookups.push(`${cookie}@${baseUrl}`), cookie === "codeplane_session=good" ? { principal, csrfToken: TOKEN } : null),
  );
  const lower = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
  const ctx = { method, get: (h: string) => lower[h.toLowerCase()] ?? "", state: { baseUrl: BASE } as Record<string, unknown> } as unknown as Context;
  try {
    await mw(ctx, async () => undefined);
    return { status: 200, principal: ctx.state.principal, lookups };
  } catch (err) {
    if (!(err instanceof HttpError)) throw err;
    return { status: err.status, principal: ctx.state.principal, lookups };
  }
}

const cookie = { Cookie: "codeplane_session=good" };

describe("authenticateSession", () => {
  it("makes a working session the principal of a same-origin GET, with or without Sec-Fetch-Site", async () => {
    expect(await call("GET", cookie)).toMatchObject({ status: 200, principal });
    expect(await call("GET", { ...cookie, "Sec-Fetch-Site": "same-origin" })).toMatchObject({ status: 200, principal });
    expect(await call("GET", { ...cookie, "Sec-Fetch-Site": "none" })).toMatchObject({ status: 200, principal });
  });

  it("leaves the cookie unused cross-site, same-site, beside a bearer token, or when the session does not work", async () => {
    for (const site of ["cross-site", "same-site"]) {
      const r = await call("POST", { ...cookie, "Sec-Fetch-Site": site, "X-CSRF-Token": TOKEN });
      expect(r).toMatchObject({ status: 200, principal: undefined, lookups: [] });
    }
    expect(await call("GET", { ...cookie, Authorization: "Bearer cp_x" })).toMatchObject({ principal: undefined, lookups: [] });
    expect(await call("GET", { Cookie: "codeplane_session=revoked" })).toMatchObject({ status: 200, principal: undefined });
  });

  it("wants the session's CSRF token and this origin on anything but GET, HEAD and OPTIONS", async () => {
    expect((await call("POST", cookie)).status).toBe(403);
    expect((await call("DELETE", { ...cookie, "X-CSRF-Token": "nope" })).status).toBe(403);
    expect((await call("PATCH", { ...cookie, "X-CSRF-Token": `${TOKEN}x` })).status).toBe(403);
    expect((await call("POST", { ...cookie, "X-CSRF-Token": TOKEN, Origin: "https://evil.example" })).status).toBe(403);
    expect((await call("POST", { ...cookie, "X-CSRF-Token": TOKEN, Origin: BASE })).status).toBe(200);
    expect(await call("POST", { ...cookie, "X-CSRF-Token": TOKEN })).toMatchObject({ status: 200, principal });
    expect((await call("HEAD", cookie)).status).toBe(200);
    expect((await call("OPTIONS", cookie)).status).toBe(200);
  });
});
