import { execFileSync, spawn } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, describe, expect, it } from "vitest";

// The warm agent (warm.ts) as a pod runs it, against a stand-in for
// codeplane's internal endpoint: it waits holding only its credential, takes
// one assignment, checks the commit out, runs the command under the framing
// entrypoint with the run's variables (and never the credential), reports
// its steps, and exits with the command's status; a pod retired before any
// claim runs nothing.

const here = dirname(fileURLToPath(import.meta.url));
const NODE = Number(process.versions.node.split(".")[0]) >= 24 ? process.execPath : join(here, "..", "..", "..", "node_modules", ".bin", "node");
// The agent writes beside itself (pod-started, in the pod's tools volume) and runs its sibling tools:
// a copy of the runner's files in a folder of its own, so a test never writes into the source tree.
const TOOLS = mkdtempSync(join(tmpdir(), "warm-tools-"));
for (const f of readdirSync(here)) if (f.endsWith(".ts") && !f.endsWith(".test.ts")) copyFileSync(join(here, f), join(TOOLS, f));
writeFileSync(join(TOOLS, "package.json"), JSON.stringify({ type: "module" }));
afterAll(() => rmSync(TOOLS, { recursive: true, force: true }));
const AGENT = join(TOOLS, "warm.ts");
const CREDENTIAL = "cpw_" + "k".repeat(43);

interface Endpoint {
  url: string;
  requests: string[];
  /** Called with each progress report's body, when it has one. */
  onBody?: (url: string, body: string) => void;
  close(): Promise<void>;
}

/** The endpoint: answers polls with `answers` in turn (a function answers the rest), records every request. */
async function endpoint(answers: ((req: IncomingMessage, res: ServerResponse) => void)[]): Promise<Endpoint> {
  const requests: string[] = [];
  const server: Server = createServer((req, res) => {
    if (req.headers.authorization !== `Bearer ${CREDENTIAL}`) {
      res.statusCode = 401;
      res.end();
      return;
    }
    requests.push(`${req.method} ${req.url}`);
    if (req.url?.startsWith("/internal/pool/progress/")) {
      let body = "";
      req.on("data", (c: Buffer) => (body += c.toString()));
      req.on("end", () => {
        if (body) ep.onBody?.(req.url!, body);
        res.statusCode = 204;
        res.end();
      });
      return;
    }
    const next = answers.length > 1 ? answers.shift()! : answers[0]!;
    next(req, res);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const ep: Endpoint = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () => new Promise((r) => server.close(() => r())),
  };
  return ep;
}

const json = (body: unknown) => (_req: IncomingMessage, res: ServerResponse) => {
  res.setHeader("content-type", "application/json");
  res.end(JSON.stringify(body));
};
const status = (code: number) => (_req: IncomingMessage, res: ServerResponse) => {
  res.statusCode = code;
  res.end();
};

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A repository with one commit; its path is what the agent fetches from (git needs no server for that). */
function repository(): { path: string; commit: string } {
  const path = mkdtempSync(join(tmpdir(), "warm-repo-"));
  dirs.push(path);
  const git = (...args: string[]) => execFileSync("git", ["-C", path, ...args], { encoding: "utf8" }).trim();
  git("init", "-q", "-b", "main");
  writeFileSync(join(path, "hello.txt"), "from the repository\n");
  git("add", ".");
  git("-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "one");
  return { path, commit: git("rev-parse", "HEAD") };
}

function agent(url: string): Promise<{ code: number | null; stdout: string; stderr: string; workspace: string }> {
  const workspace = mkdtempSync(join(tmpdir(), "warm-ws-"));
  dirs.push(workspace);
  return new Promise((resolve) => {
    const child = spawn(NODE, [AGENT], {
      env: {
        PATH: process.env.PATH,
        HOME: workspace,
        CODEPLANE_WORKSPACE: workspace,
        CODEPLANE_POOL_URL: url,
        CODEPLANE_POOL_CREDENTIAL: CREDENTIAL,
        CODEPLANE_GIT_BINARY: execFileSync("sh", ["-c", "command -v git"], { encoding: "utf8" }).trim(),
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
    child.on("close", (code) => resolve({ code, stdout, stderr, workspace }));
  });
}

/** The frames the entrypoint wrote: [kind, ts, payload]. */
const lines = (stdout: string) =>
  stdout
    .split("\n")
    .map((l) => /^@cp1 \d+ (\S+) (\S+) (.*)$/.exec(l))
    .filter((m) => m !== null)
    .map((m) => [m[1]!, m[2]!, m[3]!]);

/** Files under dir whose content holds text. */
function filesHolding(dir: string, text: string): string {
  try {
    return execFileSync("grep", ["-r", "-l", "-F", text, dir], { encoding: "utf8" }).trim();
  } catch (err) {
    if ((err as { status?: number }).status === 1) return "";
    throw err;
  }
}

describe("the warm agent", () => {
  it("waits, takes its assignment once, checks out, runs the command with the run's variables but not the credential, and reports its steps", async () => {
    const repo = repository();
    const ep = await endpoint([
      status(204),
      json({
        run_id: "r-1",
        commit: repo.commit,
        git_url: repo.path,
        checkout_token: "cpg_the-runs-token",
        command: [
          "sh",
          "-c",
          'cat hello.txt; echo "var=$API_TOKEN"; env | grep -c -e CODEPLANE_POOL -e cpg_ -e cpw_ || true; echo "parent: $(tr "\\0" " " </proc/$PPID/cmdline)"; exit 7',
        ],
        env: { API_TOKEN: "s3cret" },
        environment: null,
        outputs: null,
        timeout_seconds: 60,
      }),
      status(410),
    ]);
    try {
      const r = await agent(ep.url);
      expect(r.stderr).not.toContain("preprocessing failed");
      expect(r.code).toBe(7);
      const out = lines(r.stdout);
      expect(out).toEqual(
        expect.arrayContaining([
          ["o", expect.any(String), JSON.stringify("from the repository")],
          ["o", expect.any(String), JSON.stringify("var=s3cret")],
          // Nothing in the command's environment names the pool or carries a token.
          ["o", expect.any(String), JSON.stringify("0")],
          // The entrypoint it started while waiting ran the command.
          ["o", expect.any(String), expect.stringMatching(/^"parent: \S+ \S+\/entrypoint\.ts --wait-for-command ?"$/)],
        ]),
      );
      expect(out.at(-1)![0]).toBe("x");
      const polls = ep.requests.filter((q) => q.startsWith("GET /internal/pool/assignment"));
      expect(polls).toHaveLength(2);
      expect(ep.requests.filter((q) => q.startsWith("POST"))).toEqual([
        "POST /internal/pool/progress/checked_out",
        "POST /internal/pool/progress/started",
        "POST /internal/pool/progress/ended",
      ]);
      // The token is in no file the checkout left (not in .git/config, not in a remote URL).
      expect(filesHolding(r.workspace, "cpg_the-runs-token")).toBe("");
      expect(filesHolding(r.workspace, CREDENTIAL)).toBe("");
    } finally {
      await ep.close();
    }
  });

  it("restores the environment in its own process beside the checkout, the environment's files winning over committed ones as on a cold pod, and reports what it measured", async () => {
    // A commit that tracks a file inside the environment's folders (a committed node_modules).
    const repo = repository();
    const git = (...args: string[]) => execFileSync("git", ["-C", repo.path, ...args], { encoding: "utf8" }).trim();
    mkdirSync(join(repo.path, "node_modules"));
    writeFileSync(join(repo.path, "node_modules", "dep.txt"), "committed\n");
    git("add", ".");
    git("-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "two");
    const commit = git("rev-parse", "HEAD");
    // The archive as a build stores it: env/ and src/node_modules, relative to the workspace.
    const built = mkdtempSync(join(tmpdir(), "warm-built-"));
    dirs.push(built);
    mkdirSync(join(built, "env"));
    writeFileSync(join(built, "env", "marker"), "installed\n");
    mkdirSync(join(built, "src", "node_modules"), { recursive: true });
    writeFileSync(join(built, "src", "node_modules", "dep.txt"), "installed\n");
    const archive = execFileSync("tar", ["-C", built, "-czf", "-", "env", "src/node_modules"]);
    const store = createServer((req, res) => {
      res.statusCode = req.headers.authorization === "Bearer cpg_the-runs-token" ? 200 : 401;
      res.end(res.statusCode === 200 ? archive : undefined);
    });
    await new Promise<void>((r) => store.listen(0, "127.0.0.1", r));
    const bodies: string[] = [];
    const ep = await endpoint([
      json({
        run_id: "r-3",
        commit,
        git_url: repo.path,
        checkout_token: "cpg_the-runs-token",
        command: ["sh", "-c", "cat node_modules/dep.txt ../env/marker"],
        env: {},
        environment: { archive_url: `http://127.0.0.1:${(store.address() as AddressInfo).port}/archive`, warnings: [] },
        outputs: null,
        timeout_seconds: 60,
      }),
    ]);
    ep.onBody = (url, body) => bodies.push(`${url} ${body}`);
    try {
      const r = await agent(ep.url);
      expect(r.stderr).not.toContain("preprocessing failed");
      expect(r.code).toBe(0);
      expect(
        lines(r.stdout)
          .filter((l) => l[0] === "o")
          .map((l) => JSON.parse(l[2]!) as string),
      ).toEqual(["installed", "installed"]);
      // Nothing but the command's frames on stdout: the restore's lines went to the diagnostics.
      expect(r.stdout.split("\n").filter((l) => l && !l.startsWith("@cp1 "))).toEqual([]);
      expect(ep.requests.filter((q) => q.startsWith("POST"))).toEqual([
        "POST /internal/pool/progress/checked_out",
        "POST /internal/pool/progress/environment_ready",
        "POST /internal/pool/progress/started",
        "POST /internal/pool/progress/ended",
      ]);
      const sent = bodies.find((b) => b.startsWith("/internal/pool/progress/environment_ready "))!;
      const d = JSON.parse(sent.slice(sent.indexOf(" ") + 1)) as { steps_ms: Record<string, number>; notes: string[] };
      expect(Object.keys(d.steps_ms)).toEqual(expect.arrayContaining(["git_fetch", "environment_restored", "checked_out", "environment_ready"]));
      expect(d.notes.filter((n) => n.includes("started ahead"))).toEqual([]);
      expect(d.notes).toEqual(
        expect.arrayContaining([expect.stringMatching(/^restored the environment: .* attempt 1\)$/), expect.stringContaining("checking out over them")]),
      );
    } finally {
      await ep.close();
      await new Promise((r) => store.close(r));
    }
  });

  it("exits having run nothing when it is retired before any claim", async () => {
    const ep = await endpoint([status(204), status(410)]);
    try {
      const r = await agent(ep.url);
      expect(r.code).toBe(0);
      expect(lines(r.stdout)).toEqual([]);
      // It made an empty repository while waiting (nothing of any run: no commit, no file).
      expect(readdirSync(r.workspace)).toEqual(["src"]);
      expect(readdirSync(join(r.workspace, "src"))).toEqual([".git"]);
      expect(() => execFileSync("git", ["-C", join(r.workspace, "src"), "rev-parse", "--verify", "-q", "HEAD"])).toThrow();
      expect(ep.requests.some((q) => q.startsWith("POST"))).toBe(false);
    } finally {
      await ep.close();
    }
  });

  it("fails in preprocessing, saying why, when the checkout fails", async () => {
    const ep = await endpoint([
      json({
        run_id: "r-2",
        commit: "b".repeat(40),
        git_url: "/nonexistent/repository",
        checkout_token: "cpg_x",
        command: ["true"],
        env: {},
        environment: null,
        outputs: null,
        timeout_seconds: 60,
      }),
    ]);
    try {
      const r = await agent(ep.url);
      expect(r.code).toBe(3);
      expect(r.stderr).toContain("codeplane: preprocessing failed: checkout:");
      expect(lines(r.stdout)).toEqual([]);
    } finally {
      await ep.close();
    }
  });
});
