import type { Context } from "koa";
import { describe, expect, it } from "vitest";
import type { Principal } from "../../domain/auth/scopes.ts";
import { HttpError } from "../http-error.ts";
import { authenticate } from "./auth.ts";
import { failedAuthLimit } from "./rate-limit.ts";

// Failed authentications are counted per client address; once an address has
// spent its budget its credentials are refused with 429 before any lookup.

const VALID = "cp_valid";
const principal: Principal = { accountId: "a", scopes: new Set(), credential: { kind: "api_key", id: "k" } };

function setUp(failures: number) {
  const lookups: string[] = [];
  const mw = authenticate([async (t) => (lookups.push(t), t === VALID ? principal : null)], failedAuthLimit({ failures, windowSeconds: 60 }));
  const call = async (ip: string, header: string) => {
    const ctx = { ip, get: () => header, state: {} } as unknown as Context;
    try {
      await mw(ctx, async () => undefined);
      return { status: 200 };
    } catch (err) {
      if (!(err instanceof HttpError)) throw err;
      return { status: err.status, retryAfter: err.headers["Retry-After"], detail: err.detail };
    }
  };
  return { lookups, call };
}

describe("failed authentication limit", () => {
  it("refuses an address over its budget with 429 and Retry-After, without looking its credentials up", async () => {
    const { lookups, call } = setUp(3);
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await call("192.0.2.1", "Bearer cp_wrong")).status);
    expect(statuses).toEqual([401, 401, 401]);
    expect(lookups).toHaveLength(3);
    const blocked = await call("192.0.2.1", "Bearer cp_wrong");
    expect(blocked).toEqual({ status: 429, retryAfter: expect.stringMatching(/^[1-9][0-9]*$/), detail: "Too many failed authentication attempts" });
    expect((await call("192.0.2.1", `Bearer ${VALID}`)).status).toBe(429);
    expect(lookups).toHaveLength(3);
    // Another address is counted apart.
    expect((await call("192.0.2.2", `Bearer ${VALID}`)).status).toBe(200);
  });

  it("counts malformed headers too, and never counts a success", async () => {
    const { call } = setUp(2);
    for (let i = 0; i < 5; i++) expect((await call("192.0.2.3", `Bearer ${VALID}`)).status).toBe(200);
    expect((await call("192.0.2.3", "Basic abc")).status).toBe(401);
    expect((await call("192.0.2.3", "Bearer ")).status).toBe(401);
    expect((await call("192.0.2.3", `Bearer ${VALID}`)).status).toBe(429);
  });

  it("is off with a budget of 0", async () => {
    const { call } = setUp(0);
    for (let i = 0; i < 20; i++) expect((await call("192.0.2.4", "Bearer cp_wrong")).status).toBe(401);
  });
});
