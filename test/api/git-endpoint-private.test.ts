import { execFile as execFileCb, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import Router from "@koa/router";
import Koa from "koa";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { registerGitRoutes } from "../../src/api/routes/git.ts";
import { errorHandler } from "../../src/api/middleware/errors.ts";
import { CheckoutService } from "../../src/domain/checkout/checkout.ts";
import { mintCheckoutToken } from "../../src/domain/checkout/checkout-tokens.ts";
import { createAccount } from "../../src/domain/accounts/accounts.ts";
import { GitMirrors } from "../../src/domain/repositories/git/index.ts";
import { createFixtureRepo, type FixtureRepo } from "../helpers/git-fixture.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/service.ts";

// A repository whose code host wants a credential: the mirror fetches with it
// (as the GitHub integration will, with an installation token), and the
// workload's checkout gets the commit from codeplane with nothing but its own
// checkout token. The credential never reaches the checkout's side: not its
// requests, its .git/config, nor any file codeplane writes for the checkout.

const execFile = promisify(execFileCb);
const CREDENTIAL = { username: "x-access-token", password: "ghs_upstreamSecret123" };

let database: TestDatabase;
let fixture: FixtureRepo;
let upstream: Server;
let upstreamUrl: string;
const upstreamSaw: { auth: string | undefined; url: string }[] = [];
let endpoint: Server;
let endpointUrl: string;
let mirrors: GitMirrors;
let cacheDir: string;
const work: string[] = [];

/** git http-backend as CGI behind Basic authentication: a private code host. */
function privateHost(projectRoot: string) {
  const expected = `Basic ${Buffer.from(`${CREDENTIAL.username}:${CREDENTIAL.password}`).toString("base64")}`;
  return (req: IncomingMessage, res: ServerResponse) => {
    upstreamSaw.push({ auth: req.headers.authorization, url: req.url ?? "" });
    if (req.headers.authorization !== expected) {
      res.writeHead(401, { "WWW-Authenticate": 'Basic realm="private"' });
      return res.end();
    }
    const url = new URL(req.url ?? "/", "http://host");
    const cgi = spawn("git", ["http-backend"], {
      env: {
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        GIT_PROJECT_ROOT: projectRoot,
        GIT_HTTP_EXPORT_ALL: "1",
        PATH_INFO: url.pathname,
        QUERY_STRING: url.search.slice(1),
        REQUEST_METHOD: req.method ?? "GET",
        CONTENT_TYPE: req.headers["content-type"] ?? "",
        HTTP_CONTENT_ENCODING: req.headers["content-encoding"] ?? "",
        REMOTE_USER: CREDENTIAL.username,
      },
    });
    req.pipe(cgi.stdin);
    let head = Buffer.alloc(0);
    let headersDone = false;
    cgi.stdout.on("data", (chunk: Buffer) => {
      if (headersDone) return void res.write(chunk);
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf("\r\n\r\n");
      if (end < 0) return;
      headersDone = true;
      let status = 200;
      for (const line of head.subarray(0, end).toString("latin1").split("\r\n")) {
        const [name, ...rest] = line.split(":");
        const value = rest.join(":").trim();
        if (name!.toLowerCase() === "status") status = Number(value.split(" ")[0]);
        else res.setHeader(name!, value);
      }
      res.writeHead(status);
      res.write(head.subarray(end + 4));
    });
    cgi.stdout.on("end", () => res.end());
  };
}

function listen(server: Server): Promise<string> {
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)));
}

/** Every file under a folder, as text (for "the credential is in none of them"). */
function allText(dir: string): string {
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .map((f) => path.join(dir, f))
    .filter((f) => statSync(f).isFile())
    .map((f) => readFileSync(f).toString("latin1"))
    .join("\n");
}

beforeAll(async () => {
  database = await createTestDatabase();
  fixture = await createFixtureRepo();
  upstream = createServer(privateHost(path.dirname(fixture.path)));
  upstreamUrl = `${await listen(upstream)}/${path.basename(fixture.path)}`;
  cacheDir = mkdtempSync(path.join(tmpdir(), "codeplane-private-cache-"));
  mirrors = new GitMirrors({
    cacheDir,
    refreshIntervalSeconds: 60,
    commandTimeoutMs: 30_000,
    maxFileBytes: 1024 * 1024,
    allowLocal: true,
    logger: pino({ level: "silent" }),
    credentials: async () => CREDENTIAL,
  });
  const app = new Koa();
  const router = new Router();
  registerGitRoutes(router, new CheckoutService({ db: database.db, source: mirrors.checkouts }));
  app.use(errorHandler(pino({ level: "silent" })));
  app.use(router.routes());
  endpoint = createServer(app.callback());
  endpointUrl = await listen(endpoint);
});

afterAll(async () => {
  for (const d of work) rmSync(d, { recursive: true, force: true });
  for (const s of [endpoint, upstream]) if (s) await new Promise((r) => s.close(r));
  rmSync(cacheDir, { recursive: true, force: true });
  await fixture?.cleanup();
  await database?.drop();
});

describe("a private repository", () => {
  it("is checked out with the checkout token alone; the code host's credential stays with the mirror", async () => {
    const account = await createAccount(database.db, "private-owner");
    const repoId = crypto.randomUUID();
    await database.db
      .insertInto("repositories")
      .values({
        id: repoId,
        account_id: account.id,
        name: "private",
        url: upstreamUrl,
        provider: "git",
        default_branch: "main",
        integration_id: null,
        updated_at: new Date(),
      })
      .execute();
    const token = await mintCheckoutToken(database.db, {
      workloadKind: "run",
      workloadId: crypto.randomUUID(),
      accountId: account.id,
      repositoryId: repoId,
      commitHash: fixture.commits.main,
      expiresAt: new Date(Date.now() + 600_000),
    });

    const dir = mkdtempSync(path.join(tmpdir(), "codeplane-private-checkout-"));
    work.push(dir);
    const env = {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: "/nonexistent",
      GIT_CONFIG_NOSYSTEM: "1",
      GIT_CONFIG_GLOBAL: "/dev/null",
      GIT_TERMINAL_PROMPT: "0",
      GIT_CONFIG_COUNT: "1",
      GIT_CONFIG_KEY_0: "http.extraHeader",
      GIT_CONFIG_VALUE_0: `Authorization: Bearer ${token}`,
    };
    const git = (...args: string[]) => execFile("git", args, { cwd: dir, env });
    await git("init", "-q");
    await git("remote", "add", "origin", `${endpointUrl}/git/${repoId}.git`);
    const before = upstreamSaw.length;
    await git("fetch", "-q", "--depth", "1", "origin", fixture.commits.main);
    await git("-c", "advice.detachedHead=false", "checkout", "-q", "--detach", fixture.commits.main);
    expect(readFileSync(path.join(dir, "README.md"), "utf8")).toBe(fixture.files["README.md"]);

    // The upstream was asked only by the mirror, and always with the credential.
    const asked = upstreamSaw.slice(before);
    expect(asked.length).toBeGreaterThan(0);
    expect(asked.every((a) => a.auth?.startsWith("Basic "))).toBe(true);

    // Nothing on the checkout's side holds it: not its repository, not the view codeplane serves it from.
    const secretForms = [CREDENTIAL.password, Buffer.from(`${CREDENTIAL.username}:${CREDENTIAL.password}`).toString("base64")];
    const checkoutSide = allText(path.join(dir, ".git")) + allText(path.join(cacheDir, ".views"));
    for (const s of secretForms) expect(checkoutSide).not.toContain(s);
    // Nor the mirror on disk: the credential is passed to each fetch, never stored.
    for (const s of secretForms) expect(allText(mirrors.mirrorPath(repoId))).not.toContain(s);
  });
});
