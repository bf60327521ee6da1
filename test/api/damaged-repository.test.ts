import { execFile, spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { connect, createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../helpers/free-port.ts";
import { createFixtureRepo, type FixtureRepo } from "../helpers/git-fixture.ts";
import { startTestService, type Tenant, type TestService } from "../helpers/service.ts";
import { until } from "../helpers/until.ts";

// A repository whose server lacks objects it refers to is the repository's
// problem (409, saying so), not an outage (503): registered through the real
// git path (the mirror's clone) from a real bare repository with an object
// file deleted, over file:// and over a git daemon on loopback. A healthy
// repository whose connection is cut mid-pack prints the same `early EOF`, and
// stays a 503.

const execFileP = promisify(execFile);
const mktree = (cwd: string, input: string) =>
  new Promise<string>((resolve, reject) => {
    const child = execFile("git", ["mktree"], { cwd }, (err, stdout) =>
      err ? reject(new Error(`git mktree failed: ${err.message}`)) : resolve(stdout.trim()),
    );
    child.stdin!.end(input);
  });
const git = (cwd: string, ...args: string[]) => execFileP("git", args, { cwd, env: { ...process.env, LC_ALL: "C" } }).then((r) => r.stdout.trim());

let svc: TestService;
let alice: Tenant;
let fixture: FixtureRepo;
let dir: string;
let daemon: ChildProcess;
let daemonPort: number;
let cutter: Server;
const cut = new Set<Socket>();

/**
 * A bare copy of the fixture with one object file deleted: `blob` drops a blob
 * main's tree refers to, `parent` main's parent commit (one no ref points at: a
 * ref whose own object is gone is refused as `not our ref`, which a ref moved
 * by a push between two requests also causes, so it is not counted as damage).
 */
async function damagedCopy(name: string, what: "blob" | "parent"): Promise<string> {
  const path = join(dir, `${name}.git`);
  await git(dir, "clone", "--quiet", "--bare", "--no-local", fixture.path, path);
  // Loose objects only, so one file is one object: the clone's pack moved aside and unpacked.
  await execFileP("sh", ["-c", 'for p in objects/pack/*.pack; do mv "$p" "$p.x"; git unpack-objects -q < "$p.x"; done; rm -f objects/pack/*'], { cwd: path });
  let id = await git(path, "rev-parse", "main:README.md");
  if (what === "parent") {
    // Every fixture commit has a ref or tag on it: add two on a branch of their own and lose the first.
    const commitTree = (parent: string, message: string) =>
      git(path, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit-tree", "main^{tree}", "-p", parent, "-m", message);
    id = await commitTree("main", "lost");
    await git(path, "update-ref", "refs/heads/next", await commitTree(id, "kept"));
  }
  await rm(join(path, "objects", id.slice(0, 2), id.slice(2)));
  return path;
}

beforeAll(async () => {
  svc = await startTestService();
  alice = await svc.tenant();
  fixture = await createFixtureRepo();
  dir = await mkdtemp(join(tmpdir(), "codeplane-damaged-"));
  await damagedCopy("no-blob", "blob");
  await damagedCopy("no-parent", "parent");
  daemonPort = await freePort();
  daemon = spawn("git", ["daemon", "--reuseaddr", "--export-all", `--base-path=${dir}`, "--listen=127.0.0.1", `--port=${daemonPort}`, dir], {
    stdio: "ignore",
  });
  await until(
    "the git daemon to listen",
    10_000,
    () =>
      new Promise<boolean>((resolve) => {
        const s = connect(daemonPort, "127.0.0.1", () => {
          s.end();
          resolve(true);
        }).on("error", () => resolve(false));
      }),
  );
  // A proxy in front of the daemon that cuts every connection once some of the answer has passed.
  cutter = createServer((client) => {
    const upstream = connect(daemonPort, "127.0.0.1");
    let passed = 0;
    cut.add(client);
    client.pipe(upstream);
    upstream.on("data", (d: Buffer) => {
      passed += d.length;
      client.write(d);
      if (passed > 64 * 1024) {
        client.destroy();
        upstream.destroy();
      }
    });
    upstream.on("error", () => client.destroy());
    client.on("error", () => upstream.destroy());
  });
  await new Promise<void>((resolve) => cutter.listen(0, "127.0.0.1", resolve));
}, 60_000);

afterAll(async () => {
  for (const s of cut) s.destroy();
  await new Promise((r) => cutter?.close(r));
  daemon?.kill();
  await svc?.close();
  await fixture?.cleanup();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const register = (url: string) => alice.api("/v1/repositories", { method: "POST", json: { url, name: `r-${Math.random().toString(36).slice(2, 8)}` } });

describe("a repository whose git server lacks objects", () => {
  it.each([
    ["file://, a blob missing", () => pathToFileURL(join(dir, "no-blob.git")).href],
    ["file://, a parent commit missing", () => pathToFileURL(join(dir, "no-parent.git")).href],
    ["git://, a blob missing", () => `git://127.0.0.1:${daemonPort}/no-blob.git`],
    ["git://, a parent commit missing", () => `git://127.0.0.1:${daemonPort}/no-parent.git`],
  ])("is a 409 naming the damage, not a 503: %s", async (_name, url) => {
    const res = await register(url());
    const body = (await res.json()) as { detail: string };
    expect(res.status, JSON.stringify(body)).toBe(409);
    expect(res.headers.get("retry-after")).toBeNull();
    expect(body.detail).toMatch(/^The repository( at 127\.0\.0\.1)? is damaged: its git server answered but could not send objects the repository refers to/);
  });

  it("stays a 503 when a healthy repository's connection is cut mid-transfer", async () => {
    const port = (cutter.address() as { port: number }).port;
    // A healthy repository with 2 MiB of incompressible content, served whole by the daemon, but cut by the proxy.
    const healthy = join(dir, "healthy.git");
    await git(dir, "init", "--quiet", "--bare", healthy);
    await writeFile(join(dir, "noise.bin"), randomBytes(2 * 1024 * 1024));
    const blob = await git(healthy, "hash-object", "-w", join(dir, "noise.bin"));
    const tree = await mktree(healthy, `100644 blob ${blob}\tnoise.bin\n`);
    const commit = await git(healthy, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit-tree", tree, "-m", "noise");
    await git(healthy, "update-ref", "refs/heads/main", commit);
    const res = await register(`git://127.0.0.1:${port}/healthy.git`);
    const body = (await res.json()) as { detail: string };
    expect(res.status, JSON.stringify(body)).toBe(503);
    expect(body.detail).toMatch(/^Could not reach the git server at 127\.0\.0\.1, or it dropped the connection/);
    // And the daemon does serve it whole without the proxy.
    expect((await register(`git://127.0.0.1:${daemonPort}/healthy.git`)).status).toBe(201);
  });
});
