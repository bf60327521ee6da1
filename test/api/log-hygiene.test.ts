import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { duplicateKeys, linesWithDuplicateKeys } from "../helpers/log-lines.ts";
import { startTestService, type TestService } from "../helpers/service.ts";

// What operators read: one key once per line, and probes (which come every
// few seconds) kept out of the info level.

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(() => svc?.close());

describe("log lines", () => {
  it("the duplicate-key check finds what JSON.parse would hide", () => {
    expect(duplicateKeys('{"a":1,"b":{"a":2},"a":3}')).toEqual(["a"]);
    expect(duplicateKeys('{"a":"x\\"y","b":[{"c":1},{"c":2}]}')).toEqual([]);
  });

  it("write each key once, and probes at debug, other requests at info", async () => {
    const alice = await svc.tenant();
    for (const p of ["/healthz", "/readyz", "/metrics"]) await fetch(svc.url + p);
    expect((await alice.api("/v1/repositories")).status).toBe(200);
    expect(linesWithDuplicateKeys(svc.logs)).toEqual([]);
    const requests = svc.logs.map((l) => JSON.parse(l)).filter((l) => l.msg === "request");
    for (const p of ["/healthz", "/readyz", "/metrics"]) expect(requests.find((r) => r.path === p)?.level, p).toBe(20);
    expect(requests.find((r) => r.path === "/v1/repositories")?.level).toBe(30);
  });
});
