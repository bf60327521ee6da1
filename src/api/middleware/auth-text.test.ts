import type { Context } from "koa";
import { describe, expect, it } from "vitest";
import { HttpError } from "../http-error.ts";
import { authenticate } from "./auth.ts";

// Node's HTTP parser refuses NUL in header values before Koa runs; this is the
// second line: no authenticator (an API key lookup, an OAuth introspection)
// is ever handed a token holding text it could not store or look up.

describe("authenticate with a token holding NUL or a lone surrogate", () => {
  it.each([["cp_abc\u0000def"], ["\u0000"], ["cp_\ud800abc"]])("answers 401 without asking any authenticator: %j", async (token) => {
    const seen: string[] = [];
    const mw = authenticate([async (t) => (seen.push(t), { accountId: "a", scopes: new Set(), credential: { kind: "api_key", id: "k" } })]);
    const ctx = { get: () => `Bearer ${token}`, state: {} } as unknown as Context;
    const err = await mw(ctx, async () => {}).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(HttpError);
    expect((err as HttpError).status).toBe(401);
    expect((err as HttpError).detail).toBe("Not authenticated");
    expect(seen).toEqual([]);
  });

  it("still hands a clean token to the authenticators", async () => {
    const seen: string[] = [];
    const mw = authenticate([async (t) => (seen.push(t), null)]);
    const ctx = { get: () => "Bearer cp_clean", state: {} } as unknown as Context;
    await expect(mw(ctx, async () => {})).rejects.toMatchObject({ status: 401 });
    expect(seen).toEqual(["cp_clean"]);
  });
});
