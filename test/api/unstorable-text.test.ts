import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Tenant, TestService } from "../helpers/service.ts";
import { twoTenantsWithRepository, type TwoTenants } from "../helpers/two-tenants.ts";

// A string holding a NUL character or an unpaired UTF-16 surrogate cannot be
// stored by Postgres, Kubernetes or a process, so anywhere the API reads one
// (path, query, body value or object key) it answers 422 at that field's loc,
// before anything is written. The table is built from the OpenAPI document, so
// a new route or field is covered the day it is added. No cluster here: run
// and analysis creation answer 503 after validation, so the 422 must come first.

const NUL_ISSUE = { msg: "Value error, must not contain NUL characters (U+0000)", type: "value_error" };
const SURROGATE_ISSUE = { msg: "Value error, must not contain unpaired UTF-16 surrogates", type: "value_error" };

let setup: TwoTenants;
let svc: TestService;
let alice: Tenant;
let repoId: string;

beforeAll(async () => {
  setup = await twoTenantsWithRepository();
  ({ svc, alice, repoId } = setup);
});
afterAll(() => setup?.close());

const count = async (table: "api_keys" | "runs" | "analyses" | "environment_variables" | "repositories") =>
  Number(
    (
      await svc.db
        .selectFrom(table)
        .select((eb) => eb.fn.countAll().as("n"))
        .executeTakeFirstOrThrow()
    ).n,
  );

describe("the fuzzer's findings", () => {
  it("POST /v1/auth/keys with a NUL in name is a 422 at body.name, and no key is made", async () => {
    const before = await count("api_keys");
    const res = await alice.api("/v1/auth/keys", { method: "POST", json: { name: "a\u0000b" } });
    expect(res.status).toBe(422);
    expect(await res.json()).toEqual({ detail: [{ loc: ["body", "name"], ...NUL_ISSUE }] });
    expect(await count("api_keys")).toBe(before);
  });

  it("POST .../runs with a NUL in an argv element is a 422 at body.command.1, before the cluster is asked", async () => {
    const res = await alice.api(`/v1/repositories/${repoId}/main/runs`, { method: "POST", json: { command: ["echo", "a\u0000b"] } });
    expect(res.status).toBe(422);
    expect(await res.json()).toEqual({ detail: [{ loc: ["body", "command", 1], ...NUL_ISSUE }] });
    expect(await count("runs")).toBe(0);
  });

  it("POST .../analysis/main with a NUL in branch is a 422 at body.branch, and no analysis is made", async () => {
    const res = await alice.api(`/v1/repositories/${repoId}/analysis/main`, { method: "POST", json: { branch: "x\u0000" } });
    expect(res.status).toBe(422);
    expect(await res.json()).toEqual({ detail: [{ loc: ["body", "branch"], ...NUL_ISSUE }] });
    expect(await count("analyses")).toBe(0);
  });
});

// ---------------------------------------------------------------------------
// Every route's string fields, from the OpenAPI document.

type Schema = { $ref?: string; type?: string; properties?: Record<string, Schema>; items?: Schema; additionalProperties?: Schema | boolean; anyOf?: Schema[] };
type Operation = { parameters?: { in: string; name: string }[]; requestBody?: { content: Record<string, { schema: Schema }> } };

interface Case {
  name: string;
  method: string;
  path: string;
  query?: Record<string, string>;
  body?: unknown;
  loc: (string | number)[];
  issue: { msg: string; type: string };
}

const BAD = [
  { label: "NUL", text: "a\u0000b", issue: NUL_ISSUE },
  { label: "lone surrogate", text: "a\ud800", issue: SURROGATE_ISSUE },
] as const;
const OTHER_ID = "0190b1c2-3d4e-7f00-8a1b-2c3d4e5f6a7b";

function concreteParam(name: string): string {
  if (name === "repository_id") return repoId;
  if (name === "commit_hash") return "main";
  if (name === "path") return "README.md";
  return OTHER_ID;
}

const hasString = (s: Schema | undefined): boolean => !!s && (s.type === "string" || !!s.anyOf?.some(hasString));

function casesFor(doc: { paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, Schema> } }): Case[] {
  const resolve = (s: Schema): Schema => (s.$ref ? resolve(doc.components.schemas[s.$ref.split("/").pop()!]!) : s);
  const cases: Case[] = [];
  for (const [template, item] of Object.entries(doc.paths)) {
    if (!template.startsWith("/v1/")) continue;
    for (const [method, op] of Object.entries(item)) {
      // A signed webhook's body is the code host's, verified byte for byte, not the API's input: test/api/github-webhooks.test.ts.
      if ((op as { "x-authentication"?: string })["x-authentication"]) continue;
      const params = op.parameters ?? [];
      const pathWith = (bad?: { name: string; encoded: string }) =>
        template.replace(/\{([a-z_]+)\}/g, (_m, name: string) => (bad?.name === name ? bad.encoded : encodeURIComponent(concreteParam(name))));
      const at = `${method.toUpperCase()} ${template}`;
      // Only NUL can be sent in a URL: a percent-encoded lone surrogate is not valid UTF-8 (see below).
      for (const p of params.filter((p) => p.in === "path")) {
        cases.push({ name: `${at} path ${p.name}`, method, path: pathWith({ name: p.name, encoded: "a%00b" }), loc: ["path", p.name], issue: NUL_ISSUE });
      }
      for (const p of params.filter((p) => p.in === "query")) {
        cases.push({ name: `${at} query ${p.name}`, method, path: pathWith(), query: { [p.name]: "a\u0000b" }, loc: ["query", p.name], issue: NUL_ISSUE });
      }
      const schema = op.requestBody?.content["application/json"]?.schema;
      if (!schema) continue;
      for (const [field, raw] of Object.entries(resolve(schema).properties ?? {})) {
        const s = resolve(raw);
        for (const bad of BAD) {
          const add = (what: string, body: unknown, loc: (string | number)[]) =>
            cases.push({ name: `${at} body ${what} (${bad.label})`, method, path: pathWith(), body, loc: ["body", ...loc], issue: bad.issue });
          if (hasString(s)) add(field, { [field]: bad.text }, [field]);
          if (s.type === "array" && hasString(s.items && resolve(s.items))) add(`${field}[1]`, { [field]: ["ok", bad.text] }, [field, 1]);
          if (s.type === "object" && typeof s.additionalProperties === "object") {
            add(`${field} key`, { [field]: { [bad.text]: 1 } }, [field, bad.text, "[key]"]);
            if (hasString(resolve(s.additionalProperties))) add(`${field} value`, { [field]: { k: bad.text } }, [field, "k"]);
          }
        }
      }
      // A field the schema does not know, named with NUL: the key itself is refused.
      for (const bad of BAD) {
        cases.push({
          name: `${at} body unknown key (${bad.label})`,
          method,
          path: pathWith(),
          body: { [`x${bad.text}`]: 1 },
          loc: ["body", `x${bad.text}`, "[key]"],
          issue: bad.issue,
        });
      }
    }
  }
  return cases;
}

describe("every route's string fields", () => {
  let cases: Case[] = [];
  beforeAll(async () => {
    cases = casesFor(await (await fetch(`${svc.url}/openapi.json`)).json());
  });

  it("cover every field that reaches a database, a cluster or a process", () => {
    const names = cases.map((c) => c.name);
    expect(names.length).toBeGreaterThanOrEqual(80);
    for (const must of [
      "POST /v1/auth/keys body name (NUL)",
      "POST /v1/repositories body url (NUL)",
      "POST /v1/repositories body default_branch (lone surrogate)",
      "POST /v1/environment-variables body name (NUL)",
      "POST /v1/environment-variables body value (lone surrogate)",
      "POST /v1/repositories/{repository_id}/{commit_hash}/runs body command[1] (NUL)",
      "POST /v1/repositories/{repository_id}/{commit_hash}/runs body parameters key (NUL)",
      "POST /v1/repositories/{repository_id}/{commit_hash}/runs body parameters value (lone surrogate)",
      "POST /v1/repositories/{repository_id}/{commit_hash}/runs path commit_hash",
      "POST /v1/repositories/{repository_id}/analysis/{commit_hash} body branch (NUL)",
      "POST /v1/repositories/{repository_id}/analysis/{commit_hash} body language (lone surrogate)",
      "GET /v1/repositories/{repository_id}/files/{path} path path",
      "GET /v1/repositories/{repository_id}/files query ref",
      "GET /v1/repositories query cursor",
      "GET /v1/runs/{run_id}/logs/stream query after",
      "GET /v1/repositories/{repository_id}/analysis/{commit_hash}/logs/stream path commit_hash",
    ]) {
      expect(names).toContain(must);
    }
  });

  it("answer 422 at the field's loc, never 500, and write nothing", async () => {
    const before = await Promise.all((["api_keys", "runs", "analyses", "environment_variables", "repositories"] as const).map(count));
    const failures: string[] = [];
    for (const c of cases) {
      const qs = c.query ? `?${new URLSearchParams(c.query)}` : "";
      const res = await alice.api(c.path + qs, { method: c.method.toUpperCase(), ...(c.body !== undefined && { json: c.body }) });
      const text = await res.text();
      const detail = res.status === 422 ? (JSON.parse(text) as { detail: { loc: unknown[] }[] }).detail : [];
      const found = detail.some((d) => JSON.stringify(d) === JSON.stringify({ loc: c.loc, ...c.issue }));
      if (!found) failures.push(`${c.name}: ${res.status} ${text.slice(0, 300)}`);
    }
    expect(failures).toEqual([]);
    expect(await Promise.all((["api_keys", "runs", "analyses", "environment_variables", "repositories"] as const).map(count))).toEqual(before);
  });
});

describe("free-form and nested values", () => {
  it("refuses a run parameter's name and value, with every other issue of the request", async () => {
    const res = await alice.api(`/v1/repositories/${repoId}/main/runs`, {
      method: "POST",
      json: { analyzed_experiment: "python:train.py", parameters: { "lr\u0000": 1, epochs: "\ud800", ok: "fine" }, compute_type: "" },
    });
    expect(res.status).toBe(422);
    expect((await res.json()).detail).toEqual([
      { loc: ["body", "parameters", "lr\u0000", "[key]"], ...NUL_ISSUE },
      { loc: ["body", "parameters", "epochs"], ...SURROGATE_ISSUE },
      { loc: ["body", "compute_type"], msg: "String should have at least 1 character", type: "string_too_short" },
    ]);
  });

  it("collects body, query and path problems into one answer", async () => {
    const res = await alice.api(`/v1/repositories/${repoId}/ma%00in/runs`, { method: "POST", json: { command: ["\u0000", "ok", "\udc00"] } });
    expect(res.status).toBe(422);
    expect((await res.json()).detail).toEqual([
      { loc: ["path", "commit_hash"], ...NUL_ISSUE },
      { loc: ["body", "command", 0], ...NUL_ISSUE },
      { loc: ["body", "command", 2], ...SURROGATE_ISSUE },
    ]);
  });

  it("refuses an environment variable's value with NUL: encrypted, Postgres would take it, but no process could receive it", async () => {
    const before = await count("environment_variables");
    const res = await alice.api("/v1/environment-variables", { method: "POST", json: { name: "TOKEN", value: "se\u0000cret" } });
    expect(res.status).toBe(422);
    expect(await res.json()).toEqual({ detail: [{ loc: ["body", "value"], ...NUL_ISSUE }] });
    expect(await count("environment_variables")).toBe(before);
  });

  it("answers a body nested 250,000 deep with a NUL at the bottom with one short issue, not a crash", async () => {
    const depth = 250_000;
    const body = `{"name": "k", "scopes": ${"[".repeat(depth)}"\\u0000"${"]".repeat(depth)}}`;
    const res = await alice.api("/v1/auth/keys", { method: "POST", headers: { "content-type": "application/json" }, body });
    expect(res.status).toBe(422);
    const { detail } = (await res.json()) as { detail: { loc: unknown[]; type: string }[] };
    // 32 keys at most in a loc: "scopes" and 31 indexes.
    expect(detail).toContainEqual({ loc: ["body", "scopes", ...Array(31).fill(0)], ...NUL_ISSUE });
    expect(JSON.stringify(detail).length).toBeLessThan(10_000);
  });

  it("accepts a surrogate pair (any character outside the BMP) and stores it unchanged", async () => {
    const res = await alice.api("/v1/auth/keys", { method: "POST", json: { name: "key \ud83d\udd11" } });
    expect(res.status).toBe(201);
    expect((await res.json()).name).toBe("key \u{1f511}");
    const env = await alice.api("/v1/environment-variables", { method: "POST", json: { name: "EMOJI", value: "\u{1f600}\t\u0001", secret: false } });
    expect(env.status).toBe(201);
    expect((await env.json()).value).toBe("\u{1f600}\t\u0001");
  });
});

// ---------------------------------------------------------------------------
// What reaches the app at all: Node's HTTP parser, Koa's router and query
// parser, and koa-body's JSON parser each decide first.

async function rawRequest(request: string | Buffer): Promise<{ status: number; body: string }> {
  const { port } = new URL(svc.url);
  const reply = await new Promise<string>((resolve, reject) => {
    const socket = net.connect(Number(port), "127.0.0.1");
    let out = "";
    socket.setEncoding("latin1");
    socket.on("data", (d: string) => (out += d));
    socket.on("end", () => resolve(out));
    socket.on("error", reject);
    socket.end(request);
  });
  const [head = "", ...rest] = reply.split("\r\n\r\n");
  return { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]), body: rest.join("\r\n\r\n") };
}

describe("what the HTTP layers do before validation", () => {
  it("a NUL in a header (Authorization, Last-Event-ID) is refused by Node's parser with 400, before the app", async () => {
    const get = (path: string, headers: string) => `GET ${path} HTTP/1.1\r\nHost: x\r\n${headers}\r\nConnection: close\r\n\r\n`;
    for (const request of [
      get("/v1/runs", `Authorization: Bearer ${alice.key}\u0000`),
      get("/v1/runs", "Authorization: Bearer \u0000"),
      get(`/v1/runs/${OTHER_ID}/logs/stream`, `Authorization: Bearer ${alice.key}\r\nLast-Event-ID: 1\u0000`),
    ]) {
      expect((await rawRequest(request)).status, JSON.stringify(request)).toBe(400);
    }
    // The service is unharmed.
    expect((await alice.api("/v1/runs")).status).toBe(200);
  });

  it("a non-ASCII byte in Authorization is read as Latin-1 and is a clean 401", async () => {
    const res = await rawRequest(
      Buffer.concat([
        Buffer.from("GET /v1/runs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer cp_"),
        Buffer.from([0xed, 0xa0, 0x80]),
        Buffer.from("\r\nConnection: close\r\n\r\n"),
      ]),
    );
    expect(res.status).toBe(401);
    expect(JSON.parse(res.body)).toEqual({ detail: "Not authenticated" });
  });

  it("a raw NUL byte inside a JSON string is invalid JSON (json_invalid); the \\u0000 escape reaches validation", async () => {
    const res = await alice.api("/v1/auth/keys", { method: "POST", headers: { "content-type": "application/json" }, body: '{"name": "a\u0000b"}' });
    expect(res.status).toBe(422);
    expect(await res.json()).toEqual({ detail: [{ loc: ["body"], msg: "JSON decode error", type: "json_invalid" }] });
  });

  it("invalid UTF-8 in a JSON body is decoded to U+FFFD, which is stored as such", async () => {
    const res = await alice.api("/v1/auth/keys", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: Buffer.concat([Buffer.from('{"name": "a'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('"}')]),
    });
    expect(res.status).toBe(201);
    expect((await res.json()).name).toMatch(/^a\ufffd+$/);
  });

  it("%00 in a path or query is decoded to NUL and refused; a percent-encoded surrogate never decodes to one", async () => {
    expect((await (await alice.api(`/v1/repositories/${repoId}/files/READ%00ME.md`)).json()).detail).toEqual([{ loc: ["path", "path"], ...NUL_ISSUE }]);
    expect((await (await alice.api(`/v1/repositories/${repoId}/files?ref=%00`)).json()).detail).toEqual([{ loc: ["query", "ref"], ...NUL_ISSUE }]);
    // The router leaves an undecodable segment as it was; the query parser makes it U+FFFD.
    for (const path of [
      `/v1/repositories/${repoId}/files/%ED%A0%80`,
      `/v1/repositories/${repoId}/files?ref=%ED%A0%80`,
      `/v1/repositories/${repoId}/%ED%A0%80/runs`,
      `/v1/auth/keys/%ED%A0%80`,
    ]) {
      const res = await alice.api(path);
      expect(res.status, path).toBeLessThan(500);
      expect(JSON.stringify(await res.json()), path).not.toContain("value_error");
    }
  });
});
