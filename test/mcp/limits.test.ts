import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { insertRunRow } from "../helpers/seed.ts";
import type { Tenant, TestService } from "../helpers/service.ts";
import { twoTenantsWithRepository, type TwoTenants } from "../helpers/two-tenants.ts";

// The limits of POST /mcp (issue 29): a JSON-RPC batch costs one rate-limit
// point per message, a credential holds a bounded number of waits at once,
// and a tool result has a bounded size. Each is measured (points left, calls
// still waiting, bytes returned), not only answered.

const RATE = 250;
const MAX_BATCH = 100;
const MAX_WAITS = 4;
const MAX_RESULT = 64 * 1024;

let setup: TwoTenants;
let svc: TestService;

beforeAll(async () => {
  setup = await twoTenantsWithRepository({
    CODEPLANE_RATE_LIMIT_REQUESTS: String(RATE),
    CODEPLANE_RATE_LIMIT_WINDOW_SECONDS: "3600",
    CODEPLANE_MCP_MAX_BATCH_MESSAGES: String(MAX_BATCH),
    CODEPLANE_MCP_MAX_WAITS_PER_KEY: String(MAX_WAITS),
    CODEPLANE_MCP_MAX_RESULT_BYTES: String(MAX_RESULT),
    // The directory committed below is read at once, not after the mirror's refresh interval.
    CODEPLANE_GIT_REFRESH_SECONDS: "0",
  });
  ({ svc } = setup);
}, 120_000);
afterAll(async () => {
  await setup?.close();
});

/** One POST of JSON-RPC messages as a 2025-03-26 client (the revision with batches) sends them, without a session. */
const post = (key: string, body: unknown, signal?: AbortSignal) =>
  fetch(`${svc.url}/mcp`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${key}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2025-03-26",
    },
    body: JSON.stringify(body),
    ...(signal && { signal }),
  });
const toolCall = (id: number, name: string, args: Record<string, unknown>) => ({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } });
const remaining = (res: Response) => Number(res.headers.get("ratelimit-remaining"));

describe("MCP: a batch costs one rate-limit point per message", () => {
  it("charges N points for N messages before any runs; refuses a batch the key cannot afford whole, running none of it", async () => {
    const carol: Tenant = await svc.tenant();
    const batch = (n: number, name = "get_run", args = (_i: number): Record<string, unknown> => ({ run_id: randomUUID() })) =>
      Array.from({ length: n }, (_, i) => toolCall(i + 1, name, args(i)));

    const first = await post(carol.key, batch(100));
    expect(first.status).toBe(200);
    await first.text();
    expect(remaining(first)).toBe(RATE - 100);
    const second = await post(carol.key, batch(100));
    expect(second.status).toBe(200);
    await second.text();
    expect(remaining(second)).toBe(RATE - 200);

    // 49 points left after this request's own: 100 writes cannot be afforded, and none of them happens.
    const writes = batch(100, "set_environment_variable", (i) => ({ name: `REFUSED_${i}`, value: "x" }));
    const refused = await post(carol.key, writes);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(await refused.json()).toEqual({ detail: "Too many requests" });
    const stored = await svc.db.selectFrom("environment_variables").select("name").where("account_id", "=", carol.accountId).execute();
    expect(stored).toEqual([]);

    // The refused batch took only its request's point back: exactly 49 remain, then nothing.
    const last = await post(carol.key, batch(49));
    expect(last.status).toBe(200);
    await last.text();
    expect(remaining(last)).toBe(0);
    const over = await post(carol.key, toolCall(1, "get_run", { run_id: randomUUID() }));
    expect(over.status).toBe(429);
    await over.text();
  });

  it("refuses a batch over CODEPLANE_MCP_MAX_BATCH_MESSAGES with 422 before running it", async () => {
    const dave = await svc.tenant();
    const res = await post(
      dave.key,
      Array.from({ length: MAX_BATCH + 1 }, (_, i) => toolCall(i + 1, "list_repositories", {})),
    );
    expect(res.status).toBe(422);
    expect(await res.json()).toEqual({ detail: [{ loc: ["body"], msg: `A JSON-RPC batch holds at most ${MAX_BATCH} messages`, type: "too_long" }] });
  });
});

describe("MCP: waits per credential", () => {
  it("holds at most CODEPLANE_MCP_MAX_WAITS_PER_KEY waits of one key at once; the others answer at once; another account is served meanwhile", async () => {
    const { alice, bob, repoId } = setup;
    const runId = await insertRunRow(svc.db, { accountId: alice.accountId, repositoryId: repoId, status: "running" });
    const stop = new AbortController();
    let answered = 0;
    const calls = Array.from({ length: 50 }, (_, i) =>
      post(alice.key, toolCall(i + 1, "get_run", { run_id: runId, wait_seconds: 40 }), stop.signal)
        .then(async (res) => {
          const text = await res.text();
          answered++;
          return { status: res.status, text };
        })
        .catch(() => null),
    );
    try {
      // The calls over the limit answer at once, with the run as it is (a generous deadline: the machine may be busy).
      const deadline = Date.now() + 30_000;
      while (answered < 50 - MAX_WAITS && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      expect(answered).toBe(50 - MAX_WAITS);

      // Another account meanwhile: answered, and not after seconds (a loose bound: the machine may be loaded).
      const started = Date.now();
      const other = await bob.api("/v1/repositories");
      expect(other.status).toBe(200);
      expect(Date.now() - started).toBeLessThan(10_000);

      // The waits held are still waiting: the run has not changed, and they do not leak into answers.
      await new Promise((r) => setTimeout(r, 1000));
      expect(answered).toBe(50 - MAX_WAITS);

      // The run ends: the held waits answer with it.
      await svc.db.updateTable("runs").set({ status: "completed" }).where("id", "=", runId).execute();
      const results = await Promise.all(calls);
      expect(results.every((r) => r?.status === 200)).toBe(true);
      expect(results.filter((r) => r!.text.includes('\\"status\\":\\"completed\\"'))).toHaveLength(MAX_WAITS);
      expect(results.filter((r) => r!.text.includes('\\"status\\":\\"running\\"'))).toHaveLength(50 - MAX_WAITS);
    } finally {
      stop.abort();
    }
  }, 90_000);
});

describe("MCP: the size of a tool result", () => {
  it("pages list_files of a 50k-entry directory to CODEPLANE_MCP_MAX_RESULT_BYTES with truncated and a cursor that continues it", async () => {
    const { alice, fixture, repoId } = setup;
    const files: Record<string, string> = {};
    for (let i = 0; i < 50_000; i++) files[`big/${String(i).padStart(6, "0")}-${"n".repeat(120)}.txt`] = "";
    await fixture.commit("big", files);

    const client = new Client({ name: "codeplane-test", version: "1.0.0" }, { versionNegotiation: { mode: { pin: "2026-07-28" } } });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${svc.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${alice.key}` } } }));
    try {
      const list = async (args: Record<string, unknown>) => {
        const r = (await client.callTool({ name: "list_files", arguments: { repository_id: repoId, ref: "big", path: "big", limit: 1000, ...args } })) as {
          isError?: boolean;
          content: { text?: string }[];
          structuredContent?: { entries: { name: string }[]; next_cursor: string | null; truncated: boolean };
        };
        expect(r.isError, r.content[0]?.text).toBeFalsy();
        return { page: r.structuredContent!, bytes: Buffer.byteLength(JSON.stringify(r.structuredContent)) };
      };
      const first = await list({});
      expect(first.bytes).toBeLessThanOrEqual(MAX_RESULT);
      expect(first.page.truncated).toBe(true);
      expect(first.page.entries.length).toBeGreaterThan(0);
      expect(first.page.entries.length).toBeLessThan(1000);
      expect(first.page.next_cursor).toEqual(expect.any(String));

      const second = await list({ cursor: first.page.next_cursor });
      expect(second.bytes).toBeLessThanOrEqual(MAX_RESULT);
      expect(second.page.entries[0]!.name > first.page.entries.at(-1)!.name).toBe(true);

      // A page that fits is not marked.
      const small = await list({ limit: 10 });
      expect(small.page.truncated).toBe(false);
      expect(small.page.entries).toHaveLength(10);
    } finally {
      await client.close();
    }
  }, 180_000);
});

describe("MCP: read_file within the result limit", () => {
  it("reads a 1 MiB file in pieces of at most CODEPLANE_MCP_MAX_RESULT_BYTES, its text once each, that are the file end to end", async () => {
    const { alice, fixture, repoId } = setup;
    // Text with two- and three-byte characters and characters JSON escapes, to 1 MiB exactly.
    const unit = 'line é € "quoted" \\ tab\t\n';
    let content = unit.repeat(Math.ceil((1024 * 1024) / Buffer.byteLength(unit)));
    content = Buffer.from(content)
      .subarray(0, 1024 * 1024)
      .toString("utf8")
      .replace(/\uFFFD$/, "");
    await fixture.commit("bigfile", { "big.txt": content });
    const size = Buffer.byteLength(content);

    let text = "";
    let pieces = 0;
    for (let offset: number | null = 0; offset !== null; pieces++) {
      const res = await post(
        alice.key,
        toolCall(pieces + 1, "read_file", { repository_id: repoId, path: "big.txt", ref: "bigfile", offset, max_bytes: 10 * 1024 * 1024 }),
      );
      const body = await res.text();
      // The whole HTTP answer: the result within the limit, plus JSON-RPC's envelope (one SSE event or JSON).
      expect(Buffer.byteLength(body)).toBeLessThanOrEqual(MAX_RESULT + 512);
      const data = body.startsWith("{")
        ? body
        : body
            .split("\n")
            .find((l) => l.startsWith("data: "))!
            .slice(6);
      const result = JSON.parse(data).result as { isError?: boolean; content: { text: string }[]; structuredContent: Record<string, any> };
      expect(result.isError, result.content[0]?.text).toBeFalsy();
      expect(Buffer.byteLength(JSON.stringify(result))).toBeLessThanOrEqual(MAX_RESULT);
      // The text is in the result once: not in the structured part, nor in its JSON.
      expect(result.content).toHaveLength(2);
      expect(result.structuredContent).not.toHaveProperty("content");
      expect(result.structuredContent).toMatchObject({ size, encoding: "utf-8", offset });
      expect(Buffer.byteLength(result.content[1]!.text)).toBe(result.structuredContent.length);
      text += result.content[1]!.text;
      offset = result.structuredContent.next_offset;
      expect(result.structuredContent.truncated).toBe(offset !== null);
    }
    expect(text).toBe(content);
    expect(pieces).toBeGreaterThan((1024 * 1024) / MAX_RESULT);
  }, 120_000);
});
