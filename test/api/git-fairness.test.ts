import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createFixtureRepo, type FixtureRepo } from "../helpers/git-fixture.ts";
import { startTestService, type Tenant, type TestService } from "../helpers/service.ts";
import { startSlowGitServer, type SlowGitServer } from "../helpers/slow-git-server.ts";
import { until } from "../helpers/until.ts";

// One tenant's slow remotes must not stall another tenant's git reads. Alice
// registers four repositories on a code host (on loopback) that then starts
// trickling its answers a byte at a time; while her refreshes hang, Bob's
// reads of his own repository must still be answered promptly, and Alice's
// new work must be refused with 503 and Retry-After instead of hanging.

const GIT_TIMEOUT_SECONDS = 20;
const QUEUE_WAIT_SECONDS = 2;

let svc: TestService;
let fixture: FixtureRepo;
let remote: SlowGitServer;
let alice: Tenant;
let bob: Tenant;
const aliceRepos: string[] = [];
let bobRepo: string;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  svc = await startTestService({
    CODEPLANE_GIT_REFRESH_SECONDS: "1",
    CODEPLANE_GIT_TIMEOUT_SECONDS: String(GIT_TIMEOUT_SECONDS),
    CODEPLANE_GIT_QUEUE_WAIT_SECONDS: String(QUEUE_WAIT_SECONDS),
    CODEPLANE_GIT_MAX_FETCHES: "4",
    CODEPLANE_GIT_MAX_FETCHES_PER_ACCOUNT: "2",
  });
  fixture = await createFixtureRepo();
  remote = await startSlowGitServer({ intervalMs: 500 });
  alice = await svc.tenant();
  bob = await svc.tenant();
  for (const mount of ["alice-1", "alice-2", "alice-3", "alice-4", "alice-5", "bob"]) await remote.mount(mount, fixture.path);
  for (const n of [1, 2, 3, 4]) {
    const res = await alice.api("/v1/repositories", { method: "POST", json: { url: remote.url(`alice-${n}`), name: `slow-${n}` } });
    expect(res.status).toBe(201);
    aliceRepos.push((await res.json()).id);
  }
  const res = await bob.api("/v1/repositories", { method: "POST", json: { url: remote.url("bob"), name: "fast" } });
  expect(res.status).toBe(201);
  bobRepo = (await res.json()).id;
}, 60_000);

afterAll(async () => {
  await remote?.close();
  await svc?.close();
  await fixture?.cleanup();
});

describe("git fetch fairness across accounts", () => {
  it("answers another account promptly while one account's remotes trickle, and refuses the busy account with 503 + Retry-After", async () => {
    for (const n of [1, 2, 3, 4, 5]) remote.trickle(`alice-${n}`, true);
    await sleep(1_200); // every mirror is now older than the refresh interval

    // Alice's four reads each start a refresh that hangs on the trickling remote.
    const aliceReads = aliceRepos.map((id) => alice.api(`/v1/repositories/${id}/refs`).then((r) => r.status));
    await until("alice's refreshes to reach the remote", 10_000, () => remote.trickling >= 2, { intervalMs: 50 });
    await sleep(300);

    // Bob's repository is stale too: his read needs a fetch slot of its own.
    const started = performance.now();
    const res = await bob.api(`/v1/repositories/${bobRepo}/refs`, { signal: AbortSignal.timeout(10_000) });
    const bobMs = performance.now() - started;
    expect(res.status).toBe(200);
    expect((await res.json()).head).toBe("main");
    console.log(`bob's /refs while alice's remotes trickle: ${Math.round(bobMs)} ms`);
    expect(bobMs).toBeLessThan(5_000);

    // Alice's registration needs a fetch, and all of her slots are taken:
    // refused after the queue wait, with a hint when to try again.
    const startedPost = performance.now();
    const post = await alice.api("/v1/repositories", {
      method: "POST",
      json: { url: remote.url("alice-5"), name: "slow-5" },
      signal: AbortSignal.timeout(10_000),
    });
    const postMs = performance.now() - startedPost;
    console.log(`alice's registration while her slots are busy: ${post.status} after ${Math.round(postMs)} ms`);
    expect(post.status).toBe(503);
    expect(Number(post.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect((await post.json()).detail).toMatch(/busy|try again/i);
    expect(postMs).toBeLessThan(QUEUE_WAIT_SECONDS * 1000 + 3_000);

    // Alice's own reads are not lost: once the remote is cut off, each is
    // answered from the mirror it already had.
    await remote.close();
    expect(await Promise.all(aliceReads)).toEqual([200, 200, 200, 200]);
  }, 60_000);
});
