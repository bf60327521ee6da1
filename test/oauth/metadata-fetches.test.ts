import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pruneUnusedMetadataClients } from "../../src/oauth/clients.ts";
import { startTestService, type TestService } from "../helpers/service.ts";

// What a Client ID Metadata Document client_id may make this server do: the
// outbound GETs are counted (and their overlap measured) at a loopback
// document server, not inferred from status codes.

const CAP = 4;
const redirectUri = "http://127.0.0.1:7777/callback";

/** A document server that counts GETs per path and the most it held at once; `hold` keeps answers back until released. */
class DocumentServer {
  readonly hits = new Map<string, number>();
  inFlight = 0;
  maxInFlight = 0;
  hold = false;
  #waiting: (() => void)[] = [];
  #server!: Server;
  base = "";

  async start(): Promise<void> {
    this.#server = createServer((req, res) => {
      const path = req.url!;
      this.hits.set(path, (this.hits.get(path) ?? 0) + 1);
      this.inFlight++;
      this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
      const answer = () => {
        this.inFlight--;
        if (path.startsWith("/missing")) return void res.writeHead(404).end();
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ client_id: `${this.base}${path}`, client_name: "Doc", redirect_uris: [redirectUri], token_endpoint_auth_method: "none" }));
      };
      if (this.hold) this.#waiting.push(answer);
      else answer();
    });
    await new Promise<void>((r) => this.#server.listen(0, "127.0.0.1", r));
    this.base = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  release(): void {
    this.hold = false;
    for (const answer of this.#waiting.splice(0)) answer();
  }

  total(prefix: string): number {
    return [...this.hits].filter(([p]) => p.startsWith(prefix)).reduce((n, [, c]) => n + c, 0);
  }

  close(): void {
    this.#server.closeAllConnections();
    this.#server.close();
  }
}

/** Resolves when `check` holds, polling on the event loop; gives up after a generous deadline. */
async function until(check: () => boolean, deadlineMs = 60_000): Promise<void> {
  const end = Date.now() + deadlineMs;
  while (!check() && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
}

let svc: TestService;
const docs = new DocumentServer();

beforeAll(async () => {
  await docs.start();
  svc = await startTestService({
    CODEPLANE_OAUTH_ALLOW_LOCAL_CLIENT_METADATA: "true",
    CODEPLANE_OAUTH_CLIENT_METADATA_MAX_FETCHES: String(CAP),
    CODEPLANE_OAUTH_CLIENT_METADATA_FAILURE_SECONDS: "600",
    CODEPLANE_OAUTH_RATE_LIMIT_REQUESTS: "0",
  });
});
afterAll(async () => {
  docs.close();
  await svc?.close();
});

const authorize = (base: string, clientId: string) =>
  fetch(`${base}/oauth/authorize?client_id=${encodeURIComponent(clientId)}&redirect_uri=${encodeURIComponent(redirectUri)}`, { redirect: "manual" });

describe("client ID metadata document fetches", () => {
  it("shares one fetch among 100 concurrent requests for the same URL", async () => {
    docs.hold = true;
    const url = `${docs.base}/shared.json`;
    const all = Promise.all(Array.from({ length: 100 }, () => authorize(svc.url, url)));
    await until(() => docs.total("/shared") > 0);
    // Give the other 99 time to arrive while the first fetch is held (later ones find the stored row either way).
    await new Promise((r) => setTimeout(r, 500));
    docs.release();
    const answers = await all;
    for (const a of answers) await a.body?.cancel();
    expect(docs.total("/shared")).toBe(1);
  });

  it("runs at most the cap of fetches at once for distinct URLs, refusing the rest with 503", async () => {
    docs.hold = true;
    docs.maxInFlight = 0;
    const n = 20;
    const statuses: number[] = [];
    const all = Promise.all(
      Array.from({ length: n }, async (_, i) => {
        const res = await authorize(svc.url, `${docs.base}/distinct-${i}.json`);
        await res.body?.cancel();
        statuses.push(res.status);
        return res;
      }),
    );
    // Everything beyond the cap is answered while the cap's fetches are still held.
    await until(() => statuses.length >= n - CAP || docs.inFlight > CAP);
    docs.release();
    const answers = await all;
    expect(docs.maxInFlight).toBeLessThanOrEqual(CAP);
    expect(docs.total("/distinct-")).toBeLessThanOrEqual(CAP);
    const busy = answers.filter((a) => a.status === 503);
    expect(busy).toHaveLength(n - CAP);
    expect(busy[0]!.headers.get("retry-after")).toBe("5");
  });

  it("remembers a failed fetch: the same failing URL twice is one fetch", async () => {
    const url = `${docs.base}/missing-1.json`;
    for (let i = 0; i < 2; i++) {
      const res = await authorize(svc.url, url);
      expect(res.status).toBe(400);
      expect(await res.text()).toMatch(/HTTP 404/);
    }
    const revoke = await fetch(`${svc.url}/oauth/revoke`, { method: "POST", body: new URLSearchParams({ client_id: url, token: "x" }) });
    expect(revoke.status).toBe(401);
    expect(docs.total("/missing-1")).toBe(1);
  });

  it("prunes metadata-document clients unused for the configured days, keeping those a live grant names", async () => {
    const old = new Date(Date.now() - 40 * 86_400_000);
    const kept = `${docs.base}/kept.json`;
    const alice = await svc.tenant();
    await authorize(svc.url, kept).then((r) => r.body?.cancel());
    const key = await svc.db.selectFrom("api_keys").select("id").where("account_id", "=", alice.accountId).executeTakeFirstOrThrow();
    const now = new Date();
    await svc.db
      .insertInto("oauth_grants")
      .values({
        id: crypto.randomUUID(),
        account_id: alice.accountId,
        client_id: kept,
        api_key_id: key.id,
        scopes: ["repositories:read"],
        created_at: now,
        updated_at: now,
      })
      .execute();
    await svc.db.updateTable("oauth_clients").set({ fetched_at: old }).where("kind", "=", "metadata_document").execute();
    const stale = await svc.db.selectFrom("oauth_clients").select("client_id").where("kind", "=", "metadata_document").execute();
    expect(stale.length).toBeGreaterThan(1);

    expect(await pruneUnusedMetadataClients(svc.db, 30)).toBe(stale.length - 1);
    const left = await svc.db.selectFrom("oauth_clients").select("client_id").where("kind", "=", "metadata_document").execute();
    expect(left.map((r) => r.client_id)).toEqual([kept]);
  });
});

describe("rate limits on the endpoints that fetch", () => {
  it("charges /oauth/revoke, /oauth/introspect and /oauth/authorize with a document client_id per address", async () => {
    const limited = await startTestService({ CODEPLANE_OAUTH_ALLOW_LOCAL_CLIENT_METADATA: "true", CODEPLANE_OAUTH_RATE_LIMIT_REQUESTS: "3" });
    try {
      for (const [name, send] of [
        ["revoke", (u: string) => fetch(`${limited.url}/oauth/revoke`, { method: "POST", body: new URLSearchParams({ client_id: u, token: "x" }) })],
        ["introspect", (u: string) => fetch(`${limited.url}/oauth/introspect`, { method: "POST", body: new URLSearchParams({ client_id: u, token: "x" }) })],
        ["authorize", (u: string) => authorize(limited.url, u)],
      ] as const) {
        const statuses: number[] = [];
        for (let i = 0; i < 5; i++) {
          const res = await send(`${docs.base}/limited-${name}-${i}.json`);
          await res.body?.cancel();
          statuses.push(res.status);
        }
        expect(statuses.slice(3), name).toEqual([429, 429]);
        expect(docs.total(`/limited-${name}-`), name).toBe(3);
      }
    } finally {
      await limited.close();
    }
  });
});
