import { execFile, spawn, spawnSync } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newId } from "../../src/domain/shared/ids.ts";
import type { Tenant, TestService } from "../helpers/service.ts";
import { twoTenantsWithRepository, type TwoTenants } from "../helpers/two-tenants.ts";

// A second MCP client implementation against the same server: the official
// Python SDK, both major versions (issue 34: 2.x showed a missing scope as
// "Server returned an error response", 1.x dropped the whole session). Each
// version is installed once into a virtualenv cached under
// ~/.cache/codeplane/venv (test/mcp/python/install.sh, from PyPI) and driven
// by test/mcp/python/client.py, which talks only to this loopback server.

const HERE = path.dirname(new URL(import.meta.url).pathname);
/** The SDK versions driven: the current 2.x and the last 1.x. */
const SDK_VERSIONS = ["2.3.0", "1.27.0"];
const hasPython = spawnSync("python3", ["--version"]).status === 0;
if (!hasPython) console.warn("test/mcp/python-sdk.test.ts: skipped, python3 is not installed (apt-get install python3 python3-venv)");

interface PyResult {
  sdk: string;
  protocol?: string;
  tools?: { name: string; annotations: Record<string, unknown> | null }[];
  calls?: ({ result: { content: { type: string; text: string }[]; structuredContent?: Record<string, any>; isError?: boolean } } | { exception: string })[];
  session_exception?: string;
  traceback?: string;
}

/** Runs the Python client with a plan, without blocking this process (the server runs in it). */
function runPython(python: string, plan: unknown): Promise<PyResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(python, [path.join(HERE, "python", "client.py")], { stdio: ["pipe", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (err += d.toString()));
    child.on("error", reject);
    child.on("close", (code) => {
      try {
        resolve(JSON.parse(out) as PyResult);
      } catch {
        reject(new Error(`the Python client exited ${code} without its JSON:\n${out}\n${err}`));
      }
    });
    child.stdin.end(JSON.stringify(plan));
  });
}

const resultOf = (r: PyResult, i: number) => {
  const call = r.calls?.[i];
  if (!call || !("result" in call)) throw new Error(`call ${i}: ${JSON.stringify(call ?? r)}`);
  return call.result;
};

let setup: TwoTenants;
let svc: TestService;
let alice: Tenant;
let readOnly: Tenant;
let repoId: string;
const pythons = new Map<string, string>();

describe.skipIf(!hasPython)("MCP with the official Python SDK", () => {
  beforeAll(async () => {
    // Installs are cached by version: about 50 s each the first time, nothing afterwards.
    for (const v of SDK_VERSIONS) {
      const { stdout } = await promisify(execFile)("bash", [path.join(HERE, "python", "install.sh"), v], { timeout: 600_000 });
      pythons.set(v, stdout.trim().split("\n").at(-1)!);
    }
    setup = await twoTenantsWithRepository();
    ({ svc, alice, repoId } = setup);
    readOnly = await svc.tenant(["repositories:read", "runs:read"]);
  }, 900_000);
  afterAll(async () => {
    await setup?.close();
  });

  const modes = [
    ["2.3.0", "auto"],
    ["2.3.0", "legacy"],
    ["1.27.0", "legacy"],
  ] as const;

  describe.each(modes)("mcp %s, %s negotiation", (version, mode) => {
    const plan = (key: string, calls: { tool: string; arguments: Record<string, unknown> }[]) => ({ url: `${svc.url}/mcp`, key, mode, calls });

    it("calls the tools: results it validates against their output schemas, read_file's text once, errors naming the tool's arguments", async () => {
      const r = await runPython(
        pythons.get(version)!,
        plan(alice.key, [
          { tool: "list_repositories", arguments: {} },
          { tool: "read_file", arguments: { repository_id: repoId, path: "README.md" } },
          { tool: "read_file", arguments: { repository_id: repoId, path: "utf8.txt", offset: 0, max_bytes: 8 } },
          { tool: "run_experiment", arguments: { repository_id: repoId, commit_hash: "main", experiment_id: "e1" } },
          { tool: "get_run", arguments: { run_id: newId() } },
        ]),
      );
      expect(r.session_exception, r.traceback).toBeUndefined();
      expect(r.sdk).toBe(version);
      if (mode === "auto") expect(r.protocol).toBe("2026-07-28");
      else expect(r.protocol).toMatch(/^2025-/);

      const annotations = Object.fromEntries(r.tools!.map((t) => [t.name, t.annotations]));
      expect(Object.keys(annotations)).toHaveLength(13);
      expect(annotations.run_command).toMatchObject({ readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true });
      expect(annotations.read_file).toMatchObject({ readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true });
      expect(annotations.cancel_run).toMatchObject({ readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false });

      expect(resultOf(r, 0).structuredContent!.items.map((i: { id: string }) => i.id)).toEqual([repoId]);
      const readme = resultOf(r, 1);
      expect(readme.content.map((c) => c.text)).toEqual([JSON.stringify(readme.structuredContent), setup.fixture.files["README.md"]]);
      expect(readme.structuredContent).toMatchObject({ path: "README.md", offset: 0, truncated: false, next_offset: null });
      expect(resultOf(r, 2).structuredContent).toMatchObject({ offset: 0, truncated: true, next_offset: expect.any(Number) });
      expect(resultOf(r, 3)).toMatchObject({
        isError: true,
        content: [{ text: "Validation failed: experiment_id: Value error, this commit has no completed analysis with that experiment" }],
      });
      expect(resultOf(r, 4)).toMatchObject({ isError: true, content: [{ text: "Run not found" }] });
    }, 120_000);

    it("shows an API key's missing scope as a tool error naming it, and the session goes on", async () => {
      const r = await runPython(
        pythons.get(version)!,
        plan(readOnly.key, [
          { tool: "list_repositories", arguments: {} },
          { tool: "set_environment_variable", arguments: { name: "FROM_PYTHON", value: "1" } },
          { tool: "run_command", arguments: { repository_id: repoId, commit_hash: "main", command: ["true"] } },
          { tool: "list_repositories", arguments: {} },
        ]),
      );
      expect(r.session_exception, r.traceback).toBeUndefined();
      expect(r.calls).toHaveLength(4);
      expect(resultOf(r, 0).isError).toBeFalsy();
      expect(resultOf(r, 1)).toMatchObject({ isError: true, content: [{ type: "text", text: expect.stringMatching(/^Missing scope: env:write\b/) }] });
      expect(resultOf(r, 2)).toMatchObject({ isError: true, content: [{ type: "text", text: expect.stringMatching(/^Missing scope: runs:write\b/) }] });
      expect(resultOf(r, 3).isError).toBeFalsy();
    }, 120_000);
  });
});
