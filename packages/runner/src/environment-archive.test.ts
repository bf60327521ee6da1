import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { archiveEntries, readSetupLog } from "./environment-archive.ts";

const here = dirname(fileURLToPath(import.meta.url));
const PROGRAM = join(here, "environment-archive.ts");
const NODE = Number(process.versions.node.split(".")[0]) >= 24 ? process.execPath : join(here, "..", "..", "..", "node_modules", ".bin", "node");
const TOKEN = "cpu_test-token";

describe("archiveEntries", () => {
  const exists = (p: string) => ["/w/src/node_modules", "/w/src/packages/a/node_modules"].includes(p);
  it.each([
    [["node_modules"], ["env", "src/node_modules"]],
    [
      ["./node_modules/", "packages/a/node_modules"],
      ["env", "src/node_modules", "src/packages/a/node_modules"],
    ],
    [["missing"], ["env"]],
    [["../etc", "/abs", "a//b", ""], ["env"]],
  ])("%j -> %j", (paths, want) => {
    expect(archiveEntries("/w", paths, exists)).toEqual(want);
  });
});

describe("readSetupLog", () => {
  const dir = mkdtempSync(join(tmpdir(), "cp-setuplog-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  it("reads a regular file's last 256 KiB only", () => {
    const file = join(dir, "big.log");
    writeFileSync(file, Buffer.concat([Buffer.alloc(300 * 1024, "a"), Buffer.from("END\n")]));
    const got = readSetupLog(file)!;
    expect(got.length).toBe(256 * 1024);
    expect(got.subarray(-4).toString()).toBe("END\n");
  });
  it("refuses a symlink the install may have made (to /proc/self/environ, where the token is), and what is not a file", () => {
    const link = join(dir, "setup.log");
    symlinkSync("/proc/self/environ", link);
    expect(readSetupLog(link)).toBeNull();
    expect(readSetupLog(dir)).toBeNull();
    expect(readSetupLog(join(dir, "missing"))).toBeNull();
  });
});

// A real round trip: save from one workspace to an HTTP server that keeps the body, restore into
// another, through the program as the pod runs it.
describe("save and restore", () => {
  let server: Server;
  let url: string;
  let stored: Buffer | null = null;
  let log: string | null = null;
  const dirs: string[] = [];
  let status = 201;

  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.headers.authorization !== `Bearer ${TOKEN}`) return void res.writeHead(401).end("no");
      if (req.method === "PUT" && req.url?.endsWith("/log")) {
        const chunks: Buffer[] = [];
        req.on("data", (c: Buffer) => chunks.push(c));
        req.on("end", () => {
          log = Buffer.concat(chunks).toString("utf8");
          res.writeHead(204).end();
        });
        return;
      }
      if (req.method === "PUT") {
        const chunks: Buffer[] = [];
        req.on("data", (c: Buffer) => chunks.push(c));
        req.on("end", () => {
          if (status !== 201) return void res.writeHead(status).end("refused: too large");
          stored = Buffer.concat(chunks);
          res.writeHead(201, { "content-type": "application/json" }).end(JSON.stringify({ size: stored.length }));
        });
        return;
      }
      if (!stored) return void res.writeHead(404).end("Environment not found");
      res.writeHead(200, { "content-type": "application/gzip", "content-length": stored.length }).end(stored);
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/internal/environments/x/archive`;
  });
  afterAll(() => {
    server.close();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  const workspace = () => {
    const d = realpathSync(mkdtempSync(join(tmpdir(), "cp-archive-")));
    dirs.push(d);
    mkdirSync(join(d, "src"), { recursive: true });
    return d;
  };
  const run = (verb: string, ws: string, extra: Record<string, string> = {}) =>
    new Promise<{ code: number; out: string }>((resolve) => {
      execFile(
        NODE,
        [PROGRAM, verb],
        { env: { PATH: process.env.PATH, CODEPLANE_WORKSPACE: ws, CODEPLANE_ARCHIVE_URL: url, CODEPLANE_ARCHIVE_TOKEN: TOKEN, ...extra } },
        (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, out: stdout + stderr }),
      );
    });

  it("puts back the environment and the cached folders, byte for byte, at the same paths", async () => {
    const from = workspace();
    mkdirSync(join(from, "env/python/bin"), { recursive: true });
    writeFileSync(join(from, "env/python/bin/tool"), "#!/workspace/env/python/bin/python3\n", { mode: 0o755 });
    mkdirSync(join(from, "src/node_modules/commander"), { recursive: true });
    const big = Buffer.alloc(3 * 1024 * 1024, 7);
    writeFileSync(join(from, "src/node_modules/commander/index.js"), big);
    writeFileSync(join(from, "src/app.js"), "not part of the environment");
    writeFileSync(join(from, "setup.log"), "==> [1/1] npm ci\nadded 2 packages\n");
    const saved = await run("save", from, { CODEPLANE_CACHE_PATHS: '["node_modules","missing"]', CODEPLANE_SETUP_LOG: join(from, "setup.log") });
    expect(saved.code, saved.out).toBe(0);
    // The install's log is handed in before the archive (which makes the environment ready).
    expect(log).toBe("==> [1/1] npm ci\nadded 2 packages\n");
    expect(saved.out).toMatch(/stored the environment: [0-9.]+ MiB/);

    const to = workspace();
    const restored = await run("restore", to, { CODEPLANE_ENVIRONMENT_WARNINGS: '["python 3.12 asked: using 3.11"]' });
    expect(restored.code, restored.out).toBe(0);
    expect(restored.out).toContain("warning: python 3.12 asked: using 3.11");
    expect(restored.out).toMatch(/restored the environment/);
    const digest = (p: string) => createHash("sha256").update(readFileSync(p)).digest("hex");
    expect(digest(join(to, "src/node_modules/commander/index.js"))).toBe(digest(join(from, "src/node_modules/commander/index.js")));
    expect(readFileSync(join(to, "env/python/bin/tool"), "utf8")).toContain("#!/workspace/env/python/bin/python3");
    expect(existsSync(join(to, "src/app.js"))).toBe(false);
  });

  it("fails at once, saying why, when codeplane refuses the archive (no retry of a 4xx)", async () => {
    status = 413;
    try {
      const ws = workspace();
      mkdirSync(join(ws, "env"));
      const r = await run("save", ws);
      expect(r.code).toBe(1);
      expect(r.out).toContain("codeplane refused the environment (413): refused: too large");
      expect(r.out).not.toContain("trying again");
    } finally {
      status = 201;
    }
  });

  it("fails with the server's answer when the token opens nothing", async () => {
    const r = await run("restore", workspace(), { CODEPLANE_ARCHIVE_TOKEN: "wrong" });
    expect(r.code).toBe(1);
    expect(r.out).toContain("the environment could not be fetched (401)");
  });
});
