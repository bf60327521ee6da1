import { spawn } from "node:child_process";
import { mkdir } from "node:fs/promises";
import type { IncomingMessage, ServerResponse } from "node:http";
import { dirname, join } from "node:path";

// Real bare repositories for the double: commits are written with
// `git fast-import` (one process per commit, no shell, no work tree) and
// served to clients by `git http-backend`, spawned per request as the CGI
// program it is.

const IDENTITY = { name: "Octo Double", email: "octo-double@users.noreply.example.com" };

/** git's environment for every command: no user or system configuration, a fixed identity. */
function gitEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: "/nonexistent",
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_TERMINAL_PROMPT: "0",
    GIT_AUTHOR_NAME: IDENTITY.name,
    GIT_AUTHOR_EMAIL: IDENTITY.email,
    GIT_COMMITTER_NAME: IDENTITY.name,
    GIT_COMMITTER_EMAIL: IDENTITY.email,
    LANG: "C",
    ...extra,
  };
}

/** Runs git with `args` (no shell), feeding `input` on stdin; resolves with stdout, rejects with stderr. */
export function git(args: string[], o: { cwd?: string; input?: Buffer | string; env?: Record<string, string> } = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn("git", args, { cwd: o.cwd, env: gitEnv(o.env), stdio: ["pipe", "pipe", "pipe"] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on("data", (c: Buffer) => out.push(c));
    child.stderr.on("data", (c: Buffer) => err.push(c));
    child.on("error", reject);
    child.on("close", (code) => {
      if (code === 0) resolve(Buffer.concat(out).toString("utf8").trim());
      else reject(new Error(`git ${args.join(" ")} exited ${code}: ${Buffer.concat(err).toString("utf8").trim()}`));
    });
    child.stdin.on("error", () => {});
    child.stdin.end(o.input ?? "");
  });
}

export async function initBare(dir: string, defaultBranch: string): Promise<void> {
  await mkdir(dirname(dir), { recursive: true });
  await git(["init", "--quiet", "--bare", `--initial-branch=${defaultBranch}`, dir]);
}

export async function resolveRef(dir: string, ref: string): Promise<string | undefined> {
  try {
    return await git(["--git-dir", dir, "rev-parse", "--verify", "--quiet", `${ref}^{commit}`]);
  } catch {
    return undefined;
  }
}

/**
 * Commits `files` on top of `branch` (created from `from` when it does not
 * exist yet; an orphan when neither exists). A null content deletes the path.
 * Returns the new commit's id.
 */
export async function commitFiles(
  dir: string,
  branch: string,
  files: Record<string, string | null>,
  o: { message?: string; from?: string } = {},
): Promise<string> {
  const ref = `refs/heads/${branch}`;
  const parent = (await resolveRef(dir, ref)) ?? (o.from ? await resolveRef(dir, o.from) : undefined);
  const now = Math.floor(Date.now() / 1000);
  const ident = `${IDENTITY.name} <${IDENTITY.email}> ${now} +0000`;
  const message = o.message ?? "Update files";
  const chunks: Buffer[] = [];
  const text = (s: string) => chunks.push(Buffer.from(s, "utf8"));
  const data = (content: string) => {
    const b = Buffer.from(content, "utf8");
    text(`data ${b.length}\n`);
    chunks.push(b);
    text("\n");
  };
  text(`commit ${ref}\nmark :1\nauthor ${ident}\ncommitter ${ident}\n`);
  data(message.endsWith("\n") ? message : message + "\n");
  if (parent) text(`from ${parent}\n`);
  for (const [path, content] of Object.entries(files)) {
    if (/^\/|(^|\/)\.\.?(\/|$)|\n|"/.test(path) || path === "") throw new Error(`unusable path ${JSON.stringify(path)}`);
    if (content === null) {
      text(`D ${path}\n`);
    } else {
      text(`M 100644 inline ${path}\n`);
      data(content);
    }
  }
  text("done\n");
  await git(["--git-dir", dir, "fast-import", "--quiet", "--done", "--force"], { input: Buffer.concat(chunks) });
  const sha = await resolveRef(dir, ref);
  if (!sha) throw new Error(`fast-import did not write ${ref}`);
  return sha;
}

/** What a commit looks like in a push webhook. */
export interface CommitInfo {
  id: string;
  parent: string | null;
  tree_id: string;
  message: string;
  timestamp: string;
  added: string[];
  removed: string[];
  modified: string[];
}

export async function commitInfo(dir: string, sha: string): Promise<CommitInfo> {
  const raw = await git(["--git-dir", dir, "show", "--no-patch", "--format=%H%x00%P%x00%T%x00%cI%x00%B", sha]);
  const [id = sha, parents = "", tree = "", date = "", ...msg] = raw.split("\0");
  const status = await git(["--git-dir", dir, "diff-tree", "--root", "--no-commit-id", "-r", "--name-status", "-z", sha]);
  const added: string[] = [];
  const removed: string[] = [];
  const modified: string[] = [];
  const parts = status.split("\0").filter((p) => p !== "");
  for (let i = 0; i + 1 < parts.length; i += 2) {
    const kind = parts[i]!;
    const path = parts[i + 1]!;
    (kind === "A" ? added : kind === "D" ? removed : modified).push(path);
  }
  return { id, parent: parents.split(" ")[0] || null, tree_id: tree, message: msg.join("\0").trim(), timestamp: date, added, removed, modified };
}

/**
 * Serves one smart-HTTP request with `git http-backend` (CGI): the request
 * body is streamed to its stdin (gzip bodies are inflated by http-backend
 * itself, from HTTP_CONTENT_ENCODING), its CGI headers parsed into the
 * response, and the rest streamed back.
 */
export function httpBackend(
  req: IncomingMessage,
  res: ServerResponse,
  o: { projectRoot: string; pathInfo: string; query: string; remoteUser?: string },
): Promise<number> {
  return new Promise((resolve) => {
    const env: Record<string, string> = {
      GIT_PROJECT_ROOT: o.projectRoot,
      GIT_HTTP_EXPORT_ALL: "1",
      GATEWAY_INTERFACE: "CGI/1.1",
      SERVER_PROTOCOL: `HTTP/${req.httpVersion}`,
      SERVER_SOFTWARE: "github-double",
      REQUEST_METHOD: req.method ?? "GET",
      PATH_INFO: o.pathInfo,
      QUERY_STRING: o.query,
      REMOTE_ADDR: req.socket.remoteAddress ?? "127.0.0.1",
    };
    if (o.remoteUser) env.REMOTE_USER = o.remoteUser;
    if (req.headers["content-type"]) env.CONTENT_TYPE = req.headers["content-type"];
    if (req.headers["content-length"]) env.CONTENT_LENGTH = req.headers["content-length"];
    for (const [name, value] of Object.entries(req.headers)) {
      if (name === "authorization" || name === "content-type" || name === "content-length" || value === undefined) continue;
      env[`HTTP_${name.toUpperCase().replace(/-/g, "_")}`] = Array.isArray(value) ? value.join(", ") : value;
    }
    if (req.headers["git-protocol"]) env.GIT_PROTOCOL = String(req.headers["git-protocol"]);
    const child = spawn("git", ["http-backend"], { env: gitEnv(env), stdio: ["pipe", "pipe", "pipe"] });
    let status = 200;
    let head = Buffer.alloc(0);
    let headersDone = false;
    const fail = (code: number) => {
      if (!res.headersSent) res.writeHead(code, { "content-type": "text/plain" });
      res.end();
    };
    child.on("error", () => {
      fail(500);
      resolve(500);
    });
    child.stderr.resume();
    child.stdout.on("data", (chunk: Buffer) => {
      if (headersDone) {
        if (!res.write(chunk)) {
          child.stdout.pause();
          res.once("drain", () => child.stdout.resume());
        }
        return;
      }
      head = Buffer.concat([head, chunk]);
      let end = head.indexOf("\r\n\r\n");
      let sep = 4;
      if (end < 0) {
        end = head.indexOf("\n\n");
        sep = 2;
      }
      if (end < 0) return;
      headersDone = true;
      const headers: Record<string, string> = {};
      for (const line of head.subarray(0, end).toString("latin1").split(/\r?\n/)) {
        const i = line.indexOf(":");
        if (i < 0) continue;
        const name = line.slice(0, i).trim();
        const value = line.slice(i + 1).trim();
        if (name.toLowerCase() === "status") status = Number.parseInt(value, 10) || 500;
        else headers[name] = value;
      }
      res.writeHead(status, headers);
      const rest = head.subarray(end + sep);
      if (rest.length) res.write(rest);
    });
    child.stdout.on("end", () => {
      if (!headersDone) fail(502);
      else res.end();
    });
    child.on("close", () => resolve(headersDone ? status : 502));
    child.stdin.on("error", () => {});
    req.pipe(child.stdin);
    res.on("close", () => {
      if (child.exitCode === null) child.kill("SIGKILL");
    });
  });
}

export function repoDir(root: string, owner: string, name: string): string {
  return join(root, owner, `${name}.git`);
}
