import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestService, type TestService } from "../helpers/service.ts";

// Failed authentication is limited per client address, before any lookup, and
// a request that will be refused is refused before its body is read.

let svc: TestService;
let proxied: TestService;
let plain: TestService;

beforeAll(async () => {
  svc = await startTestService({ CODEPLANE_AUTH_FAILURE_LIMIT: "5", CODEPLANE_RATE_LIMIT_WINDOW_SECONDS: "60" });
  proxied = await startTestService({ CODEPLANE_AUTH_FAILURE_LIMIT: "5", CODEPLANE_TRUST_PROXY: "true" });
  plain = await startTestService();
});
afterAll(async () => {
  await svc?.close();
  await proxied?.close();
  await plain?.close();
});

const UNKNOWN_KEY = "cp_" + "A".repeat(38);

describe("failed authentication", () => {
  it("answers 429 with Retry-After once an address spends its failure budget, valid keys from elsewhere unaffected", async () => {
    const statuses: number[] = [];
    let last: Response | undefined;
    for (let i = 0; i < 8; i++) {
      last = await fetch(`${svc.url}/v1/repositories`, { headers: { authorization: `Bearer ${i % 2 ? "garbage" : UNKNOWN_KEY}` } });
      statuses.push(last.status);
    }
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429, 429]);
    expect(Number(last!.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(await last!.json()).toEqual({ detail: "Too many failed authentication attempts" });
  });

  it("counts by the address the trusted proxy saw, so a spoofed X-Forwarded-For does not reset the count", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++) {
      const res = await fetch(`${proxied.url}/v1/repositories`, {
        headers: { authorization: `Bearer ${UNKNOWN_KEY}`, "x-forwarded-for": `10.0.0.${i}, 203.0.113.7` },
      });
      statuses.push(res.status);
    }
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429]);
    // Another client behind the same proxy is counted apart.
    const other = await fetch(`${proxied.url}/v1/repositories`, { headers: { authorization: `Bearer ${UNKNOWN_KEY}`, "x-forwarded-for": "203.0.113.8" } });
    expect(other.status).toBe(401);
    const tenant = await proxied.tenant();
    const ok = await fetch(`${proxied.url}/v1/repositories`, { headers: { authorization: `Bearer ${tenant.key}`, "x-forwarded-for": "203.0.113.9" } });
    expect(ok.status).toBe(200);
  });
});

/** Sends the headers and the start of a body that never completes; resolves with the status line, or null. */
function statusWithUnfinishedBody(url: string, pathname: string, headers: Record<string, string>, waitMs: number): Promise<string | null> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    let got = "";
    const timer = setTimeout(() => {
      socket.destroy();
      resolve(null);
    }, waitMs);
    socket.on("data", (d) => {
      got += d.toString("latin1");
      if (got.includes("\r\n")) {
        clearTimeout(timer);
        socket.destroy();
        resolve(got.slice(0, got.indexOf("\r\n")));
      }
    });
    socket.on("error", () => undefined);
    const head = Object.entries({ host: hostname, "content-type": "application/json", "content-length": "100000", ...headers })
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join("");
    socket.write(`POST ${pathname} HTTP/1.1\r\n${head}\r\n{"name":`);
  });
}

describe("the body of a refused request is never read", () => {
  it("refuses a missing credential without waiting for the body", async () => {
    expect(await statusWithUnfinishedBody(plain.url, "/v1/auth/keys", {}, 3_000)).toBe("HTTP/1.1 401 Unauthorized");
  });

  it("refuses a key without the scope without waiting for the body", async () => {
    const reader = await plain.tenant(["repositories:read"]);
    expect(await statusWithUnfinishedBody(plain.url, "/v1/auth/keys", { authorization: `Bearer ${reader.key}` }, 3_000)).toBe("HTTP/1.1 403 Forbidden");
  });

  it("does not read the body of an unknown path", async () => {
    expect(await statusWithUnfinishedBody(plain.url, "/v1/nothing-here", {}, 3_000)).toBe("HTTP/1.1 404 Not Found");
  });
});
