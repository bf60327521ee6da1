import { describe, expect, it } from "vitest";
import { invalidClient } from "./errors.ts";
import { MetadataFetchGate } from "./metadata-fetches.ts";

/** A fetch the test ends by hand, counting how many were started. */
function pending() {
  let started = 0;
  const ends: ((v: string) => void)[] = [];
  const work = () => {
    started++;
    return new Promise<string>((r) => ends.push(r));
  };
  return { work, started: () => started, endAll: (v = "doc") => ends.splice(0).forEach((e) => e(v)) };
}

describe("MetadataFetchGate", () => {
  it("shares the fetch in flight for one URL", async () => {
    const gate = new MetadataFetchGate({ maxFetches: 2, failureSeconds: 60 });
    const p = pending();
    const all = Promise.all(Array.from({ length: 50 }, () => gate.run("https://a.example/c", p.work)));
    expect(p.started()).toBe(1);
    p.endAll();
    expect(await all).toEqual(Array(50).fill("doc"));
    expect(gate.running).toBe(0);
  });

  it("refuses a fetch beyond the cap with 503 and Retry-After, and admits again once one ends", async () => {
    const gate = new MetadataFetchGate({ maxFetches: 2, failureSeconds: 60 });
    const p = pending();
    const running = [gate.run("https://a.example/1", p.work), gate.run("https://a.example/2", p.work)];
    await expect(gate.run("https://a.example/3", p.work)).rejects.toMatchObject({ status: 503, headers: { "Retry-After": "5" } });
    expect(p.started()).toBe(2);
    p.endAll();
    await Promise.all(running);
    const third = gate.run("https://a.example/3", p.work);
    p.endAll();
    expect(await third).toBe("doc");
  });

  it("remembers a document's failure for failureSeconds, not a database error", async () => {
    const gate = new MetadataFetchGate({ maxFetches: 2, failureSeconds: 60 });
    let calls = 0;
    const failing = () => {
      calls++;
      return Promise.reject(invalidClient("client metadata document could not be fetched: HTTP 404"));
    };
    const t0 = Date.now();
    await expect(gate.run("https://a.example/x", failing, t0)).rejects.toMatchObject({ error: "invalid_client" });
    await expect(gate.run("https://a.example/x", failing, t0 + 1000)).rejects.toMatchObject({ error: "invalid_client" });
    expect(calls).toBe(1);
    await expect(gate.run("https://a.example/x", failing, t0 + 61_000)).rejects.toMatchObject({ error: "invalid_client" });
    expect(calls).toBe(2);

    let dbCalls = 0;
    const dbDown = () => {
      dbCalls++;
      return Promise.reject(new Error("connection terminated"));
    };
    await expect(gate.run("https://a.example/y", dbDown)).rejects.toThrow("connection terminated");
    await expect(gate.run("https://a.example/y", dbDown)).rejects.toThrow("connection terminated");
    expect(dbCalls).toBe(2);
  });

  it("says it is time to prune at most once an hour", () => {
    const gate = new MetadataFetchGate({ maxFetches: 1, failureSeconds: 0 });
    const t = Date.now();
    expect(gate.pruneDue(t)).toBe(true);
    expect(gate.pruneDue(t + 60_000)).toBe(false);
    expect(gate.pruneDue(t + 3_600_000)).toBe(true);
  });
});
