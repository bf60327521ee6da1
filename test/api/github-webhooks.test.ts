// GitHub webhook intake and its durable queue, over HTTP against the real
// service and Postgres. Nothing here needs GitHub's API: the events used
// (ping, installation, a push about an installation nobody connected) are
// handled from codeplane's own tables. Analyses and check runs started by
// webhooks are in test/integrations and the end-to-end suite.
import { createHmac, randomUUID } from "node:crypto";
import { webhookOnlyGitHubEnv } from "../helpers/github-env.ts";
import { sign } from "@octokit/webhooks-methods";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newId } from "../../src/domain/shared/ids.ts";
import { startTestService, type Tenant, type TestService } from "../helpers/service.ts";

const SECRET = "current-webhook-secret";
const OLD = "previous-webhook-secret";
const githubEnv = webhookOnlyGitHubEnv(SECRET, { CODEPLANE_GITHUB_WEBHOOK_OLD_SECRETS: OLD });

let svc: TestService;
let alice: Tenant;
let bob: Tenant;
const ALICE_INSTALLATION = 4100 + Math.floor(Math.random() * 1000);

async function deliver(event: string, payload: unknown, o: { secret?: string | null; id?: string; body?: string; headers?: Record<string, string> } = {}) {
  const body = o.body ?? JSON.stringify(payload);
  const id = o.id ?? randomUUID();
  const headers: Record<string, string> = {
    "content-type": "application/json",
    "x-github-event": event,
    "x-github-delivery": id,
    "user-agent": "GitHub-Hookshot/test",
  };
  if (o.secret !== null) headers["x-hub-signature-256"] = await sign(o.secret ?? SECRET, body);
  Object.assign(headers, o.headers);
  const res = await fetch(`${svc.url}/v1/webhooks/github`, { method: "POST", headers, body });
  return { res, id, json: await res.json() };
}

async function row(id: string) {
  return svc.db.selectFrom("github_webhook_deliveries").selectAll().where("id", "=", id).executeTakeFirst();
}

async function settled(id: string, timeoutMs = 10_000) {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const r = await row(id);
    if (r && r.status !== "queued" && r.status !== "processing") return r;
    if (Date.now() > until) throw new Error(`delivery ${id} still ${r?.status}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

beforeAll(async () => {
  svc = await startTestService(githubEnv);
  alice = await svc.tenant();
  bob = await svc.tenant();
  const now = new Date();
  await svc.db
    .insertInto("integrations")
    .values({
      id: newId(),
      account_id: alice.accountId,
      provider: "github",
      installation_id: ALICE_INSTALLATION,
      account_login: "alice-org",
      account_type: "Organization",
      repository_selection: "all",
      created_at: new Date(now.getTime() - 60_000),
      updated_at: now,
    })
    .execute();
});

afterAll(async () => {
  await svc?.close();
});

describe("webhook intake", () => {
  it("accepts a signed delivery with 202, handles it once, and answers a redelivery 200 without handling it again", async () => {
    const first = await deliver("ping", { zen: "Keep it logically awesome.", hook_id: 1, installation: { id: ALICE_INSTALLATION } });
    expect(first.res.status).toBe(202);
    expect(first.json).toEqual({ id: first.id, status: "queued" });
    const done = await settled(first.id);
    expect(done).toMatchObject({ status: "handled", attempts: 1, payload: null });
    const again = await deliver("ping", { zen: "again", installation: { id: ALICE_INSTALLATION } }, { id: first.id });
    expect(again.res.status).toBe(200);
    expect(again.json).toEqual({ id: first.id, status: "already_accepted" });
    expect(await row(first.id)).toMatchObject({ status: "handled", attempts: 1 });
  });

  it("accepts the previous secret during a rotation", async () => {
    const d = await deliver("ping", { zen: "old" }, { secret: OLD });
    expect(d.res.status).toBe(202);
  });

  it.each([
    { name: "a forged signature", secret: "not-the-secret" },
    { name: "no signature", secret: null },
  ])("refuses $name with 401 and records nothing", async ({ secret }) => {
    const d = await deliver("push", { ref: "refs/heads/main" }, { secret });
    expect(d.res.status).toBe(401);
    expect(d.json.detail).toMatch(/signature/);
    expect(await row(d.id)).toBeUndefined();
  });

  it("refuses a signature over other bytes than those sent (the body is verified as it came)", async () => {
    const body = JSON.stringify({ zen: "x" });
    const headers = { "x-hub-signature-256": await sign(SECRET, body + " ") };
    const d = await deliver("ping", null, { body, headers });
    expect(d.res.status).toBe(401);
    expect(await row(d.id)).toBeUndefined();
  });

  it("says what is wrong with a delivery that lacks its event or id, or is not JSON", async () => {
    const noEvent = await deliver("", { zen: "x" });
    expect(noEvent.res.status).toBe(400);
    expect(noEvent.json.detail).toMatch(/X-GitHub-Event/);
    const noId = await deliver("ping", { zen: "x" }, { id: "" });
    expect(noId.res.status).toBe(400);
    expect(noId.json.detail).toBe("X-GitHub-Delivery is missing");
    expect(await svc.db.selectFrom("github_webhook_deliveries").select("id").where("id", "=", "").executeTakeFirst()).toBeUndefined();
    const notJson = await deliver("ping", null, { body: "payload=%7B%7D" });
    expect(notJson.res.status).toBe(400);
    const form = await deliver("ping", null, { body: "payload=%7B%7D", headers: { "content-type": "application/x-www-form-urlencoded" } });
    expect(form.res.status).toBe(415);
    expect(form.json.detail).toMatch(/application\/json/);
  });

  it("takes bodies up to 25 MB on this route and refuses larger ones with 413", async () => {
    const big = { zen: "x".repeat(24 * 1024 * 1024) };
    expect((await deliver("ping", big)).res.status).toBe(202);
    const tooBig = await deliver("ping", null, { body: `{"zen":"${"x".repeat(25 * 1024 * 1024)}"}` });
    expect(tooBig.res.status).toBe(413);
    expect(await row(tooBig.id)).toBeUndefined();
  });

  it("keeps a payload with text Postgres cannot store (NUL, unpaired surrogates, in values and keys), without them", async () => {
    const body = '{"zen":"a\\u0000b","path":"C:\\\\u0000","bad":"x\\ud800y","k\\u0000ey":1,"installation":{"id":1}}';
    const d = await deliver("ping", null, { body });
    expect(d.res.status, JSON.stringify(d.json)).toBe(202);
    expect((await settled(d.id)).status).toBe("handled");
  });

  it("refuses an empty body with a well-formed forged signature with 401, and logs no error", async () => {
    const before = svc.logs.length;
    const forged = `sha256=${"ab".repeat(32)}`;
    for (const body of ["", "{}"]) {
      const d = await deliver("push", null, { body, secret: null, headers: { "x-hub-signature-256": forged } });
      expect(d.res.status).toBe(401);
      expect(d.json.detail).toMatch(/signature/);
    }
    const rightOverEmpty = `sha256=${createHmac("sha256", SECRET).update("").digest("hex")}`;
    const signedEmpty = await deliver("ping", null, { body: "", secret: null, headers: { "x-hub-signature-256": rightOverEmpty } });
    expect(signedEmpty.res.status).toBe(400);
    const errors = svc.logs.slice(before).filter((l) => JSON.parse(l).level >= 50);
    expect(errors).toEqual([]);
  });

  it("refuses signed JSON nested deeper than CODEPLANE_WEBHOOK_MAX_DEPTH with 400 that says so, and keeps what is within it", async () => {
    const before = svc.logs.length;
    for (const depth of [5_000, 100_000]) {
      const body = `{"zen":"deep","installation":{"id":${ALICE_INSTALLATION}},"x":${"[".repeat(depth)}${"]".repeat(depth)}}`;
      const d = await deliver("ping", null, { body });
      expect(d.res.status).toBe(400);
      expect(d.json.detail).toMatch(/nests JSON more than 100 levels/);
      expect(await row(d.id)).toBeUndefined();
    }
    // Brackets inside strings are text, not nesting.
    const within = `{"zen":"${"[{".repeat(500)}","installation":{"id":${ALICE_INSTALLATION}},"x":${"[".repeat(98)}${"]".repeat(98)}}`;
    const ok = await deliver("ping", null, { body: within });
    expect(ok.res.status, JSON.stringify(ok.json)).toBe(202);
    expect((await settled(ok.id)).status).toBe("handled");
    expect(svc.logs.slice(before).filter((l) => JSON.parse(l).level >= 50)).toEqual([]);
  });

  it("records and skips what it does not act on, with the reason", async () => {
    const tag = await deliver("push", {
      ref: "refs/tags/v1",
      after: "a".repeat(40),
      repository: { id: 1, full_name: "alice-org/r" },
      installation: { id: ALICE_INSTALLATION },
    });
    expect(await settled(tag.id)).toMatchObject({ status: "skipped", reason: "tag push (v1)" });
    const deletion = await deliver("push", {
      ref: "refs/heads/old",
      after: "0".repeat(40),
      deleted: true,
      repository: { id: 1, full_name: "alice-org/r" },
      installation: { id: ALICE_INSTALLATION },
    });
    expect(await settled(deletion.id)).toMatchObject({ status: "skipped", reason: "branch deletion (refs/heads/old)" });
    const stranger = await deliver("push", {
      ref: "refs/heads/main",
      after: "b".repeat(40),
      repository: { id: 2, full_name: "someone/else" },
      installation: { id: 999_999_999 },
    });
    expect((await settled(stranger.id)).reason).toMatch(/not connected/);
    const unregistered = await deliver("push", {
      ref: "refs/heads/main",
      after: "c".repeat(40),
      repository: { id: 3, full_name: "alice-org/unregistered" },
      installation: { id: ALICE_INSTALLATION },
    });
    expect((await settled(unregistered.id)).reason).toMatch(/not registered/);
    const star = await deliver("star", { action: "created", installation: { id: ALICE_INSTALLATION } });
    expect(await settled(star.id)).toMatchObject({ status: "skipped", reason: "event star is not one codeplane handles" });
  });

  it("keeps the integration in step with installation events", async () => {
    const suspended = await deliver("installation", {
      action: "suspend",
      installation: { id: ALICE_INSTALLATION, account: { login: "alice-org", type: "Organization" } },
    });
    expect(await settled(suspended.id)).toMatchObject({ status: "handled" });
    const integration = () => svc.db.selectFrom("integrations").selectAll().where("account_id", "=", alice.accountId).executeTakeFirstOrThrow();
    expect((await integration()).suspended).toBe(true);
    expect((await (await alice.api("/v1/integrations")).json()).items[0]).toMatchObject({ suspended: true });
    const back = await deliver("installation", {
      action: "unsuspend",
      installation: { id: ALICE_INSTALLATION, account: { login: "alice-org", type: "Organization" } },
    });
    await settled(back.id);
    expect((await integration()).suspended).toBe(false);
  });
});

describe("the queue", () => {
  async function insert(id: string, o: { status: "queued" | "processing" | "failed"; availableAt?: Date; attempts?: number }) {
    await svc.db
      .insertInto("github_webhook_deliveries")
      .values({
        id,
        event: "ping",
        action: null,
        installation_id: ALICE_INSTALLATION,
        repository_full_name: null,
        status: o.status,
        payload: JSON.stringify({ zen: "z" }),
        received_at: new Date(),
        attempts: o.attempts ?? 0,
      })
      .execute();
    if (o.availableAt) await svc.db.updateTable("github_webhook_deliveries").set({ available_at: o.availableAt }).where("id", "=", id).execute();
  }

  it("handles a delivery accepted by a process that stopped before handling it", async () => {
    const id = randomUUID();
    await insert(id, { status: "queued" });
    expect(await settled(id)).toMatchObject({ status: "handled", attempts: 1 });
  });

  it("takes over a delivery whose handler died once its lease has run out, and not before", async () => {
    const expired = randomUUID();
    const held = randomUUID();
    await insert(expired, { status: "processing", availableAt: new Date(Date.now() - 1000), attempts: 1 });
    await insert(held, { status: "processing", availableAt: new Date(Date.now() + 60_000), attempts: 1 });
    expect(await settled(expired)).toMatchObject({ status: "handled", attempts: 2 });
    expect(await row(held)).toMatchObject({ status: "processing", attempts: 1 });
  });

  it("queues a failed delivery again when GitHub redelivers it", async () => {
    const id = randomUUID();
    await insert(id, { status: "failed", attempts: 8 });
    const again = await deliver("ping", { zen: "redelivered", installation: { id: ALICE_INSTALLATION } }, { id });
    expect(again.res.status).toBe(202);
    expect(await settled(id)).toMatchObject({ status: "handled", attempts: 1 });
  });

  it("has several replicas handle each delivery exactly once", async () => {
    const second = await startTestService({ ...githubEnv, DATABASE_URL: svc.databaseUrl, CODEPLANE_ENCRYPTION_KEY: svc.encryptionKey });
    try {
      const ids = Array.from({ length: 30 }, () => randomUUID());
      await Promise.all(ids.map((id) => insert(id, { status: "queued" })));
      for (const id of ids) expect(await settled(id)).toMatchObject({ status: "handled", attempts: 1 });
    } finally {
      await second.close();
    }
  });
});

describe("GET /v1/webhooks/github/deliveries", () => {
  it("lists the account's installations' deliveries, newest first, in pages; another account sees none of them", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await deliver("ping", { zen: `p${i}`, installation: { id: ALICE_INSTALLATION } })).id);
    const first = await (await alice.api("/v1/webhooks/github/deliveries?limit=2")).json();
    expect(first.items.map((d: { id: string }) => d.id)).toEqual([ids[2], ids[1]]);
    expect(first.items[0]).toMatchObject({ event: "ping", installation_id: ALICE_INSTALLATION, attempts: expect.any(Number), received_at: expect.any(String) });
    const next = await (await alice.api(`/v1/webhooks/github/deliveries?limit=2&cursor=${first.next_cursor}`)).json();
    expect(next.items[0].id).toBe(ids[0]);
    expect((await (await bob.api("/v1/webhooks/github/deliveries")).json()).items).toEqual([]);
    const bad = await alice.api("/v1/webhooks/github/deliveries?cursor=nope");
    expect(bad.status).toBe(422);
  });
});

describe("metrics", () => {
  it("count deliveries by event and outcome", async () => {
    const text = await (await fetch(`${svc.url}/metrics`)).text();
    expect(text).toMatch(/codeplane_github_webhook_deliveries_total\{event="ping",outcome="accepted"\} [1-9]/);
    expect(text).toMatch(/codeplane_github_webhook_deliveries_total\{event="ping",outcome="handled"\} [1-9]/);
    expect(text).toMatch(/codeplane_github_webhook_deliveries_total\{event="ping",outcome="duplicate"\} [1-9]/);
    expect(text).toMatch(/codeplane_github_webhook_deliveries_total\{event="push",outcome="unsigned"\} [1-9]/);
    expect(text).toMatch(/codeplane_github_webhook_deliveries_total\{event="push",outcome="skipped"\} [1-9]/);
  });
});

describe("without a GitHub App", () => {
  it("answers 503 naming the missing settings, and the rest of the service is ready", async () => {
    const bare = await startTestService();
    try {
      const headers = {
        "content-type": "application/json",
        "x-github-event": "ping",
        "x-github-delivery": randomUUID(),
        "x-hub-signature-256": await sign(SECRET, "{}"),
      };
      const res = await fetch(`${bare.url}/v1/webhooks/github`, { method: "POST", headers, body: "{}" });
      expect(res.status).toBe(503);
      expect((await res.json()).detail).toMatch(/CODEPLANE_GITHUB_APP_ID/);
      const t = await bare.tenant();
      expect((await t.api("/v1/webhooks/github/deliveries")).status).toBe(503);
    } finally {
      await bare.close();
    }
  });
});
