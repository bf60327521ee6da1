import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newId } from "../../src/domain/shared/ids.ts";
import { FIXTURE_UTF8 } from "../helpers/git-fixture.ts";
import type { Scope } from "../../src/domain/auth/scopes.ts";
import type { Tenant, TestService } from "../helpers/service.ts";
import { twoTenantsWithRepository, type TwoTenants } from "../helpers/two-tenants.ts";

// A real MCP client over real HTTP against the real service and Postgres, with
// no cluster: every tool that needs none is called for real; starting runs and
// analyses gives the API's 503 as a tool error.

const TOOL_NAMES = [
  "list_repositories",
  "register_repository",
  "list_files",
  "read_file",
  "start_analysis",
  "get_analysis",
  "run_experiment",
  "run_command",
  "get_run",
  "get_run_logs",
  "cancel_run",
  "list_environment_variables",
  "set_environment_variable",
];

let setup: TwoTenants;
let svc: TestService;
let alice: Tenant;
let bob: Tenant;
let repoId: string;
const clients: Client[] = [];

type Negotiation = "legacy" | "modern";

async function connect(key: string | null, negotiation: Negotiation = "modern"): Promise<Client> {
  const client = new Client(
    { name: "codeplane-test", version: "1.0.0" },
    negotiation === "modern" ? { versionNegotiation: { mode: { pin: "2026-07-28" } } } : {},
  );
  const transport = new StreamableHTTPClientTransport(new URL(`${svc.url}/mcp`), {
    ...(key && { requestInit: { headers: { authorization: `Bearer ${key}` } } }),
    onInsufficientScope: "throw",
  });
  await client.connect(transport);
  clients.push(client);
  return client;
}

interface ToolResult {
  isError?: boolean;
  content: { type: string; text?: string }[];
  structuredContent?: Record<string, unknown>;
}

const call = async (client: Client, name: string, args: Record<string, unknown> = {}) => (await client.callTool({ name, arguments: args })) as ToolResult;
const ok = async (client: Client, name: string, args: Record<string, unknown> = {}) => {
  const r = await call(client, name, args);
  expect(r.isError, `${name}: ${r.content[0]?.text}`).toBeFalsy();
  // The same JSON as text, for clients that read only content.
  expect(JSON.parse(r.content[0]!.text!)).toEqual(r.structuredContent);
  return r.structuredContent as Record<string, any>;
};
const toolError = async (client: Client, name: string, args: Record<string, unknown> = {}) => {
  const r = await call(client, name, args);
  expect(r.isError, `${name} should fail`).toBe(true);
  return r.content[0]!.text!;
};

let a: Client;
let b: Client;

beforeAll(async () => {
  setup = await twoTenantsWithRepository();
  ({ svc, alice, bob, repoId } = setup);
  a = await connect(alice.key);
  b = await connect(bob.key);
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
  await setup?.close();
});

describe("MCP: tools", () => {
  it("lists every tool of the contract with input and output schemas, scope and annotations", async () => {
    const { tools } = await a.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([...TOOL_NAMES].sort());
    for (const t of tools) {
      expect(t.inputSchema.type, t.name).toBe("object");
      expect(t.outputSchema?.type, t.name).toBe("object");
      expect(t.description, t.name).toMatch(/Needs the `[a-z]+:(read|write)` scope\.$/);
      expect(t.annotations?.readOnlyHint, t.name).toBe(/^(list|get|read)_/.test(t.name));
      // Every hint stated, none left to the spec's defaults (src/mcp/tools.test.ts pins each tool's).
      expect(Object.keys(t.annotations ?? {}).sort(), t.name).toEqual(["destructiveHint", "idempotentHint", "openWorldHint", "readOnlyHint", "title"]);
    }
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    expect(byName.run_command!.inputSchema).toMatchObject({
      required: expect.arrayContaining(["repository_id", "commit_hash", "command"]),
      properties: { command: { type: "array", minItems: 1 } },
      additionalProperties: false,
    });
    expect(byName.get_run!.inputSchema.properties!.wait_seconds).toMatchObject({ type: "integer", minimum: 0, maximum: 50 });
    expect(byName.get_run_logs!.inputSchema.properties).toHaveProperty("after");
    expect(byName.read_file!.inputSchema.properties).toMatchObject({ offset: { type: "integer", minimum: 0 }, max_bytes: { type: "integer", minimum: 1 } });
    expect(byName.read_file!.outputSchema!.properties).not.toHaveProperty("content");
    expect(byName.run_command!.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true, openWorldHint: true });
    expect(byName.cancel_run!.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true, openWorldHint: false });
    expect(byName.set_environment_variable!.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });
  });

  it("lists, registers and reads repositories and files", async () => {
    const page = await ok(a, "list_repositories", {});
    expect(page.items.map((r: { id: string }) => r.id)).toEqual([repoId]);
    expect(page.next_cursor).toBeNull();

    const other = await (await import("../helpers/git-fixture.ts")).createFixtureRepo();
    try {
      const created = await ok(a, "register_repository", { url: other.url, name: "second" });
      expect(created).toMatchObject({ name: "second", url: other.url, default_branch: "main", provider: "git" });
      expect(await toolError(a, "register_repository", { url: other.url, name: "second" })).toMatch(/already/i);
      const paged = await ok(a, "list_repositories", { limit: 1 });
      expect(paged.items).toHaveLength(1);
      expect(paged.next_cursor).toEqual(expect.any(String));
      const rest = await ok(a, "list_repositories", { limit: 1, cursor: paged.next_cursor });
      expect(rest.items.map((r: { id: string }) => r.id)).toEqual([repoId]);
    } finally {
      await other.cleanup();
    }

    const root = await ok(a, "list_files", { repository_id: repoId });
    expect(root.commit_hash).toBe(setup.fixture.commits.main);
    expect(root.entries.map((e: { name: string }) => e.name)).toContain("README.md");
    // The file's text once, as a block of its own; the structured result says what it is.
    const readme = await call(a, "read_file", { repository_id: repoId, path: "README.md" });
    const readmeSize = Buffer.byteLength(setup.fixture.files["README.md"] as string);
    expect(readme.structuredContent).toEqual({
      commit_hash: setup.fixture.commits.main,
      path: "README.md",
      size: readmeSize,
      encoding: "utf-8",
      offset: 0,
      length: readmeSize,
      truncated: false,
      next_offset: null,
    });
    expect(readme.content.map((c) => c.text)).toEqual([JSON.stringify(readme.structuredContent), setup.fixture.files["README.md"]]);
    const utf8 = await call(a, "read_file", { repository_id: repoId, path: "utf8.txt", ref: "main" });
    expect(utf8.content[1]!.text).toBe(FIXTURE_UTF8);
    // A piece at a time: the pieces, following next_offset, are the file, no character cut in two.
    let text = "";
    for (let offset: number | null = 0; offset !== null;) {
      const piece = await call(a, "read_file", { repository_id: repoId, path: "utf8.txt", offset, max_bytes: 7 });
      expect(piece.structuredContent).toMatchObject({ offset, encoding: "utf-8" });
      text += piece.content[1]!.text;
      offset = piece.structuredContent!.next_offset as number | null;
    }
    expect(text).toBe(FIXTURE_UTF8);
    expect(await toolError(a, "read_file", { repository_id: repoId, path: "utf8.txt", offset: 10_000 })).toMatch(/^Validation failed: offset: /);
    expect(await toolError(a, "read_file", { repository_id: repoId, path: "../etc/passwd" })).toMatch(/path/i);
    expect(await toolError(a, "read_file", { repository_id: repoId, path: "nope.txt" })).toMatch(/not found/);
  });

  it("answers starting runs and analyses without a cluster with the API's 503 detail", async () => {
    expect(await toolError(a, "run_command", { repository_id: repoId, commit_hash: "main", command: ["echo", "hi"] })).toMatch(/Kubernetes is not reachable/);
    expect(await toolError(a, "start_analysis", { repository_id: repoId, commit_hash: "main" })).toMatch(/Kubernetes is not reachable/);
    expect(await toolError(a, "get_analysis", { repository_id: repoId, commit_hash: "main" })).toBe("Analysis not found");
    const unknownRun = newId();
    for (const name of ["get_run", "get_run_logs", "cancel_run"]) expect(await toolError(a, name, { run_id: unknownRun })).toBe("Run not found");
  });

  it("validates input as the API does, before anything runs", async () => {
    const bad = await call(a, "run_command", { repository_id: repoId, commit_hash: "main", command: [] });
    expect(bad.isError).toBe(true);
    expect(bad.content[0]!.text).toMatch(/command/);
    const extra = await call(a, "get_run", { run_id: newId(), surprise: 1 });
    expect(extra.isError).toBe(true);
    const tooLong = await call(a, "get_run", { run_id: newId(), wait_seconds: 51 });
    expect(tooLong.isError).toBe(true);
  });

  it("names the tool's own arguments in the service's validation failures, never the REST API's", async () => {
    // The service checks the experiment before it needs a cluster: the REST API says body.analyzed_experiment.
    expect(await toolError(a, "run_experiment", { repository_id: repoId, commit_hash: "main", experiment_id: "e1" })).toBe(
      "Validation failed: experiment_id: Value error, this commit has no completed analysis with that experiment",
    );
    expect(await toolError(a, "run_command", { repository_id: repoId, commit_hash: "main", command: ["true"], compute_type: "huge" })).toMatch(
      /^Validation failed: compute_type: Input should be /,
    );
    expect(await toolError(a, "run_command", { repository_id: repoId, commit_hash: "bad..ref", command: ["true"] })).toMatch(
      /^Validation failed: commit_hash: /,
    );
    expect(await toolError(a, "read_file", { repository_id: repoId, path: "README.md", ref: "bad..ref" })).toMatch(/\bref\b/);
    expect(await toolError(a, "read_file", { repository_id: repoId, path: "../x" })).toMatch(/^Validation failed: path: /);
    for (const text of [
      await toolError(a, "run_experiment", { repository_id: repoId, commit_hash: "main", experiment_id: "e1" }),
      await toolError(a, "read_file", { repository_id: repoId, path: "../etc/passwd" }),
    ])
      expect(text).not.toMatch(/\b(body|query|path)\./);
  });

  it("sets (creates, then replaces) and lists environment variables", async () => {
    const created = await ok(a, "set_environment_variable", { name: "MCP_TOKEN", value: "s3cret" });
    expect(created).toMatchObject({ name: "MCP_TOKEN", value: null, secret: true, repository_id: null });
    const replaced = await ok(a, "set_environment_variable", { name: "MCP_TOKEN", value: "other" });
    expect(replaced.id).toBe(created.id);
    expect(replaced.secret).toBe(true);
    const plain = await ok(a, "set_environment_variable", { name: "MCP_MODE", value: "fast", secret: false, repository_id: repoId });
    expect(plain).toMatchObject({ value: "fast", repository_id: repoId });
    const all = await ok(a, "list_environment_variables", {});
    expect(all.items.map((v: { name: string }) => v.name).sort()).toEqual(["MCP_MODE", "MCP_TOKEN"]);
    const repoOnly = await ok(a, "list_environment_variables", { repository_id: repoId });
    expect(repoOnly.items.map((v: { name: string }) => v.name)).toEqual(["MCP_MODE"]);
    // The REST API sees the same rows.
    const rest = await (await alice.api("/v1/environment-variables")).json();
    expect(rest.items.map((v: { id: string }) => v.id).sort()).toEqual(all.items.map((v: { id: string }) => v.id).sort());
    expect(await toolError(a, "set_environment_variable", { name: "1BAD", value: "x" })).toMatch(/name/);
  });
});

describe("MCP: tenancy", () => {
  it("answers another account's ids as not found", async () => {
    expect((await ok(b, "list_repositories")).items).toEqual([]);
    expect(await toolError(b, "list_files", { repository_id: repoId })).toBe("Repository not found");
    expect(await toolError(b, "read_file", { repository_id: repoId, path: "README.md" })).toBe("Repository not found");
    expect(await toolError(b, "start_analysis", { repository_id: repoId, commit_hash: "main" })).toBe("Repository not found");
    expect(await toolError(b, "get_analysis", { repository_id: repoId, commit_hash: "main" })).toBe("Repository not found");
    expect(await toolError(b, "run_command", { repository_id: repoId, commit_hash: "main", command: ["true"] })).toBe("Repository not found");
    expect(await toolError(b, "list_environment_variables", { repository_id: repoId })).toBe("Repository not found");
    expect(await toolError(b, "set_environment_variable", { name: "X", value: "y", repository_id: repoId })).toBe("Repository not found");
    expect((await ok(b, "list_environment_variables")).items).toEqual([]);
  });
});

describe("MCP: authentication and scopes", () => {
  it("answers a POST without a credential 401 with a Bearer challenge, and the client cannot connect", async () => {
    const res = await fetch(`${svc.url}/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
    });
    expect(res.status).toBe(401);
    // The challenge names the protected-resource metadata, where an MCP client starts OAuth (test/mcp/oauth.test.ts),
    // and the scopes to ask for: the read-only tools', never keys:write.
    expect(res.headers.get("www-authenticate")).toBe(
      `Bearer scope="repositories:read analyses:read runs:read env:read", resource_metadata="${svc.url}/.well-known/oauth-protected-resource"`,
    );
    expect(await res.json()).toEqual({ detail: "Not authenticated" });
    await expect(connect(null, "legacy")).rejects.toThrow();
    await expect(connect("cp_not_a_real_key")).rejects.toThrow();
  });

  it("names the same scopes when a token was sent that does not work", async () => {
    const res = await fetch(`${svc.url}/mcp`, {
      method: "POST",
      headers: { authorization: "Bearer cp_not_a_real_key", "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
    });
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toBe(
      `Bearer error="invalid_token", scope="repositories:read analyses:read runs:read env:read", resource_metadata="${svc.url}/.well-known/oauth-protected-resource"`,
    );
    // /v1's challenges name no scope: a REST client asks for what it needs.
    const v1 = await fetch(`${svc.url}/v1/repositories`, { headers: { authorization: "Bearer cp_not_a_real_key" } });
    expect(v1.headers.get("www-authenticate")).toBe(`Bearer error="invalid_token", resource_metadata="${svc.url}/.well-known/oauth-protected-resource"`);
  });

  it("answers a tool whose scope an API key lacks with a tool error naming the scope; the session goes on", async () => {
    const readOnly = await svc.tenant(["repositories:read", "runs:read"] satisfies Scope[]);
    const c = await connect(readOnly.key);
    // Every tool is listed, with the scope it needs in its description.
    expect((await c.listTools()).tools.map((t) => t.name).sort()).toEqual([...TOOL_NAMES].sort());
    expect((await ok(c, "list_repositories")).items).toEqual([]);
    const denied = await toolError(c, "run_command", { repository_id: repoId, commit_hash: "main", command: ["true"] });
    expect(denied).toMatch(/^Missing scope: runs:write\. This API key does not have it/);
    expect(await toolError(c, "set_environment_variable", { name: "A", value: "b" })).toMatch(/^Missing scope: env:write\b/);
    // Nothing was written, and the same client goes on working.
    expect((await (await alice.api("/v1/environment-variables")).json()).items.map((v: { name: string }) => v.name)).not.toContain("A");
    expect((await ok(c, "list_repositories")).items).toEqual([]);
    expect(await toolError(c, "get_run", { run_id: newId() })).toBe("Run not found");

    // The same answer on the wire, for a 2025-era client too: HTTP 200, a result with isError.
    const raw = await rawLegacyCall(readOnly.key, "set_environment_variable", { name: "A", value: "b" });
    expect(raw.status).toBe(200);
    expect(raw.headers.get("www-authenticate")).toBeNull();
    expect((await messageOf(raw)).result).toMatchObject({
      isError: true,
      content: [{ type: "text", text: expect.stringMatching(/^Missing scope: env:write/) }],
    });
    const line = svc.logs.map((l) => JSON.parse(l)).find((l) => l.msg === "MCP tool call" && l.missing_scope === "env:write");
    expect(line).toMatchObject({ tool: "set_environment_variable", is_error: true });
  });

  it("answers GET and DELETE 405 with Allow: POST (stateless: no stream, no session to end)", async () => {
    for (const method of ["GET", "DELETE"]) {
      const res = await fetch(`${svc.url}/mcp`, { method, headers: { authorization: `Bearer ${alice.key}`, accept: "text/event-stream" } });
      expect(res.status, method).toBe(405);
      expect(res.headers.get("allow")).toBe("POST, OPTIONS");
    }
  });

  it("refuses a body over the limit with 413", async () => {
    const res = await fetch(`${svc.url}/mcp`, {
      method: "POST",
      headers: { authorization: `Bearer ${alice.key}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "read_file", arguments: { path: "x".repeat(2 * 1024 * 1024) } } }),
    });
    expect(res.status).toBe(413);
  });

  it("refuses a body that is not JSON with 415", async () => {
    const res = await fetch(`${svc.url}/mcp`, {
      method: "POST",
      headers: { authorization: `Bearer ${alice.key}`, "content-type": "text/plain", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
    });
    expect(res.status).toBe(415);
  });

  it("logs each tool call with its tool and the request id, never its arguments", async () => {
    await ok(a, "set_environment_variable", { name: "LOGGED", value: "do-not-log-me" });
    const line = svc.logs.map((l) => JSON.parse(l)).find((l) => l.msg === "MCP tool call" && l.tool === "set_environment_variable");
    expect(line).toMatchObject({ request_id: expect.any(String), is_error: false, duration_ms: expect.any(Number) });
    expect(svc.logs.join("\n")).not.toContain("do-not-log-me");
  });

  it("carries the rate-limit headers of /v1", async () => {
    const res = await rawLegacyInitialize(alice.key, "2025-03-26");
    expect(res.headers.get("ratelimit-limit")).toEqual(expect.any(String));
  });
});

/** A 2025-era exchange by hand: initialize, then a call on its own POST (no session). */
async function rawLegacyInitialize(key: string, protocolVersion: string) {
  return fetch(`${svc.url}/mcp`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion, capabilities: {}, clientInfo: { name: "old", version: "0" } },
    }),
  });
}
async function rawLegacyCall(key: string, name: string, args: Record<string, unknown>) {
  return fetch(`${svc.url}/mcp`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${key}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2025-06-18",
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name, arguments: args } }),
  });
}

/** The JSON-RPC message of a response that may come as JSON or as one SSE event. */
async function messageOf(res: Response): Promise<any> {
  const body = await res.text();
  if ((res.headers.get("content-type") ?? "").startsWith("text/event-stream")) {
    const data = body.split("\n").find((l) => l.startsWith("data: "));
    return JSON.parse(data!.slice("data: ".length));
  }
  return JSON.parse(body);
}

describe("MCP: older clients", () => {
  it("serves a 2025-era client (initialize handshake, no session) with the same tools", async () => {
    const old = await connect(alice.key, "legacy");
    expect(old.getNegotiatedProtocolVersion()).toBe("2025-11-25");
    const { tools } = await old.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([...TOOL_NAMES].sort());
    expect((await ok(old, "list_repositories")).items.map((r: { id: string }) => r.id)).toContain(repoId);
    expect(await toolError(old, "get_run", { run_id: newId() })).toBe("Run not found");
  });

  it.each(["2025-03-26", "2024-11-05"])("negotiates protocol version %s with a client that asks for it", async (version) => {
    const res = await rawLegacyInitialize(alice.key, version);
    expect(res.status).toBe(200);
    expect(res.headers.get("mcp-session-id")).toBeNull();
    const msg = await messageOf(res);
    expect(msg.result.protocolVersion).toBe(version);
    expect(msg.result.serverInfo.name).toBe("codeplane");
    const callRes = await rawLegacyCall(alice.key, "list_repositories", {});
    expect(callRes.status).toBe(200);
    const result = (await messageOf(callRes)).result;
    expect(JSON.parse(result.content[0].text).items.length).toBeGreaterThan(0);
  });
});
