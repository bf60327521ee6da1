import type { CoordinationV1Api, V1Lease } from "@kubernetes/client-node";
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { LeaderElector } from "./leader-election.ts";

// Stopping while a round is under way. The real API server is in
// test/e2e/leader-election.test.ts (failover between processes); here a Lease
// held in memory lets a test keep a write in flight for as long as it needs,
// which on a real cluster is a window of milliseconds every renewal.

const apiError = (code: number) => Object.assign(new Error(`HTTP ${code}`), { code });

/** One Lease, with resourceVersions as the API server checks them; `hold()` keeps the next write waiting until released. */
class FakeLeases {
  lease: V1Lease | null = null;
  #version = 0;
  #held: { reached: () => void; go: Promise<void> } | null = null;

  /** The next create or replace waits; resolves `reached` once it does, and the write goes on at `release()`. */
  hold(): { reached: Promise<void>; release: () => void } {
    let reached!: () => void;
    let release!: () => void;
    const reachedP = new Promise<void>((r) => (reached = r));
    const go = new Promise<void>((r) => (release = r));
    this.#held = { reached, go };
    return { reached: reachedP, release };
  }

  async #gate(): Promise<void> {
    const held = this.#held;
    if (!held) return;
    this.#held = null;
    held.reached();
    await held.go;
  }

  #store(body: V1Lease): V1Lease {
    this.lease = { ...body, metadata: { ...body.metadata, resourceVersion: String(++this.#version) } };
    return structuredClone(this.lease);
  }

  readNamespacedLease = async (): Promise<V1Lease> => {
    if (!this.lease) throw apiError(404);
    return structuredClone(this.lease);
  };

  createNamespacedLease = async ({ body }: { body: V1Lease }): Promise<V1Lease> => {
    await this.#gate();
    if (this.lease) throw apiError(409);
    return this.#store(body);
  };

  replaceNamespacedLease = async ({ body }: { body: V1Lease }): Promise<V1Lease> => {
    await this.#gate();
    if (!this.lease) throw apiError(404);
    if (body.metadata?.resourceVersion !== this.lease.metadata?.resourceVersion) throw apiError(409);
    return this.#store(body);
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const electors: LeaderElector[] = [];

function candidate(leases: FakeLeases, identity: string) {
  const events: string[] = [];
  const elector = new LeaderElector({
    api: leases as unknown as CoordinationV1Api,
    namespace: "ns",
    name: "lease",
    identity,
    // Renewals every 200 ms.
    leaseSeconds: 1,
    logger: pino({ level: "silent" }),
    onStartedLeading: async () => void events.push("started"),
    onStoppedLeading: async () => void events.push("stopped"),
  });
  electors.push(elector);
  return { elector, events };
}

async function until(what: string, check: () => boolean): Promise<void> {
  for (let i = 0; !check(); i++) {
    if (i > 200) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

afterEach(async () => {
  await Promise.all(electors.splice(0).map((e) => e.stop()));
});

describe("LeaderElector.stop", () => {
  it("waits for a renewal under way: leading stops once and never starts again, and the Lease is let go", async () => {
    const leases = new FakeLeases();
    const { elector, events } = candidate(leases, "a");
    elector.start();
    await until("a to lead", () => events.includes("started"));

    const renewal = leases.hold();
    await renewal.reached;
    const stopped = elector.stop();
    renewal.release();
    await stopped;
    expect(events).toEqual(["started", "stopped"]);
    expect(leases.lease?.spec?.holderIdentity).toBe("");

    await sleep(500);
    expect(events).toEqual(["started", "stopped"]);
  });

  it("a round that wins the Lease while stop is called never leads, and lets the Lease go at once", async () => {
    const leases = new FakeLeases();
    const { elector, events } = candidate(leases, "a");
    const acquisition = leases.hold();
    elector.start();
    await acquisition.reached;
    const stopped = elector.stop();
    acquisition.release();
    await stopped;
    expect(leases.lease?.spec?.holderIdentity).toBe("");
    await sleep(500);
    expect(events).toEqual([]);

    // Released, not left to expire: another candidate leads on its first round.
    const b = candidate(leases, "b");
    b.elector.start();
    await until("b to lead", () => b.events.includes("started"));
  });

  it("of a candidate that never led leaves the holder's Lease alone", async () => {
    const leases = new FakeLeases();
    const a = candidate(leases, "a");
    a.elector.start();
    await until("a to lead", () => a.events.includes("started"));
    const b = candidate(leases, "b");
    b.elector.start();
    await sleep(300);
    await b.elector.stop();
    expect(b.events).toEqual([]);
    expect(leases.lease?.spec?.holderIdentity).toBe("a");
  });

  it("with no Lease at all stops quietly", async () => {
    const leases = new FakeLeases();
    const { elector, events } = candidate(leases, "a");
    await elector.stop();
    expect(events).toEqual([]);
    expect(leases.lease).toBeNull();
  });
});
