import { ApiException } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { isTransient } from "./transient.ts";

const withCode = (code: string, message = "failed") => Object.assign(new Error(message), { code });

describe("isTransient", () => {
  it.each([
    ["API server conflict", new ApiException(409, "conflict", {}, {}), true],
    ["API server throttling", new ApiException(429, "slow down", {}, {}), true],
    ["API server error", new ApiException(503, "unavailable", {}, {}), true],
    ["API server refuses the request", new ApiException(422, "invalid", {}, {}), false],
    ["forbidden", new ApiException(403, "forbidden", {}, {}), false],
    ["connection refused", withCode("ECONNREFUSED"), true],
    ["connection reset, as a cause", new Error("fetch failed", { cause: withCode("ECONNRESET") }), true],
    ["Postgres restarting", withCode("57P01", "terminating connection due to administrator command"), true],
    ["Postgres connection failure", withCode("08006"), true],
    ["Postgres deadlock", withCode("40P01"), true],
    ["Postgres cannot store the data", withCode("22P05", "unsupported Unicode escape sequence"), false],
    ["Postgres constraint", withCode("23514"), false],
    ["a bug", new TypeError("Cannot read properties of undefined (reading 'name')"), false],
    ["pg pool closed", new Error("Connection terminated unexpectedly"), true],
    ["nothing", undefined, false],
  ])("%s: %s", (_name, err, transient) => {
    expect(isTransient(err)).toBe(transient);
  });
});
