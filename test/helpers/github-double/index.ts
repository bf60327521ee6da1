import { createPublicKey, generateKeyPair, randomBytes, randomUUID, type KeyObject } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join, relative, sep } from "node:path";
import { promisify } from "node:util";
import { type CommitInfo, commitFiles, commitInfo, git, httpBackend, initBare, repoDir, resolveRef } from "./git.ts";
import { sign } from "@octokit/webhooks-methods";
import { verifyAppJwt } from "./jwt.ts";
import { findDescribedOperation, GHES_VERSION, operation, type Operation } from "./openapi.ts";
import { buildWebhook, type WebhookOptions, type World } from "./webhooks.ts";

// A GitHub Enterprise Server double for the integration's tests, on loopback:
// the REST API under /api/v3 (the endpoints a GitHub App integration uses,
// with GitHub's authentication, status codes, errors and pagination), git
// smart HTTP for real bare repositories (gated by installation tokens as
// GitHub gates them), and webhook deliveries built from GitHub's example
// payloads. Every request it receives and every response it sends is checked
// against GitHub's OpenAPI description; what fails lands in `violations`.
// See README.md next to this file.

const generateKeyPairP = promisify(generateKeyPair);

export const API_VERSION = "2022-11-28";

export interface CheckRunOutput {
  title: string | null;
  summary: string | null;
  text: string | null;
  annotationsCount: number;
}

/** A check run as GitHub holds it at one moment. */
export interface CheckRunState {
  name: string;
  headSha: string;
  status: "queued" | "in_progress" | "completed" | "waiting" | "requested" | "pending";
  conclusion: string | null;
  detailsUrl: string | null;
  externalId: string | null;
  startedAt: string | null;
  completedAt: string | null;
  output: CheckRunOutput;
}

export interface CheckRunRecord extends CheckRunState {
  id: number;
  repository: string;
  /** Every accepted create and update, in order, with the body sent and the state it left. */
  history: { action: "created" | "updated"; at: string; request: Record<string, unknown>; state: CheckRunState }[];
}

export interface RequestRecord {
  method: string;
  path: string;
  status: number;
  auth: "jwt" | "installation" | "none";
}

export interface GitHubDouble {
  readonly url: string;
  readonly apiUrl: string;
  readonly appId: number;
  readonly appSlug: string;
  readonly privateKey: string;
  readonly webhookSecret: string;
  addInstallation(o: { account: { login: string; type: "User" | "Organization" }; repositorySelection?: "all" | "selected" }): { id: number };
  addRepository(o: {
    owner: string;
    name: string;
    private: boolean;
    files: Record<string, string>;
    defaultBranch?: string;
    installationId?: number;
  }): Promise<{ id: number; fullName: string; cloneUrl: string; headSha: string; defaultBranch: string }>;
  push(fullName: string, files: Record<string, string | null>, o?: { branch?: string; message?: string }): Promise<string>;
  grantRepository(installationId: number, fullName: string): void;
  revokeRepository(installationId: number, fullName: string): void;
  suspend(installationId: number): void;
  unsuspend(installationId: number): void;
  deleteInstallation(installationId: number): void;
  expireTokens(): void;
  failNext(method: string, pathPattern: RegExp, status: number, times?: number): void;
  checkRuns(fullName: string): CheckRunRecord[];
  readonly requests: RequestRecord[];
  readonly violations: string[];
  tokensIssued(): number;
  webhook(event: string, o?: WebhookOptions): { headers: Record<string, string>; body: string };
  deliver(targetUrl: string, event: string, o?: WebhookOptions): Promise<Response>;
  close(): Promise<void>;

  // Additions beyond the agreed interface.
  /** Empties `violations` and returns what it held (for tests that break a rule on purpose). */
  takeViolations(): string[];
  /** Test hook: the next `times` responses to matching API requests are passed through `mutate` before validation and sending. */
  tamperNext(method: string, pathPattern: RegExp, mutate: (body: any) => any, times?: number): void;
  /** The bare repository's directory (to inspect it with git). */
  repositoryPath(fullName: string): string;
  /** Tokens issued so far (live or not), newest last; for tests that check what a client was given. */
  readonly issuedTokens: readonly string[];
  /** Test hook: the next `times` matching requests (API or git) wait `ms` before being handled (a slow or hanging GitHub). */
  stallNext(method: string, pathPattern: RegExp, ms: number, times?: number): void;
  /** Points a lightweight tag at `sha` (default: the default branch's tip), as a tag push would; returns the sha. */
  tag(fullName: string, name: string, sha?: string): Promise<string>;
  /**
   * The App's setup URL (where GitHub sends the browser after an installation).
   * With it set, the next visit to `${url}/apps/{slug}/installations/new?state=...`
   * after `installOnNextVisit(id)` is redirected (302) to
   * `${setupUrl}?installation_id=<id>&setup_action=install&state=...`, as GitHub does.
   */
  setSetupUrl(setupUrl: string): void;
  installOnNextVisit(installationId: number, o?: { setupAction?: "install" | "update" }): void;
  /** The next visit is a user's request for an installation an owner must approve: redirected with `setup_action=request` and no `installation_id`. */
  requestOnNextVisit(): void;
}

interface Account {
  login: string;
  id: number;
  type: "User" | "Organization";
}

interface Repo {
  id: number;
  owner: Account;
  name: string;
  fullName: string;
  private: boolean;
  defaultBranch: string;
  dir: string;
  createdAt: string;
  updatedAt: string;
  pushedAt: string;
  /** Commits the double made, by id (for webhook payloads, which are built synchronously). */
  commits: Map<string, CommitInfo>;
  /** Branch tips, as the double last moved them. */
  branches: Map<string, string>;
  /** The last push to each ref (`refs/heads/main`), as a push webhook reports it. */
  pushes: Map<string, { before: string; after: string }>;
}

interface Installation {
  id: number;
  account: Account;
  selection: "all" | "selected";
  selected: Set<number>;
  suspendedAt: string | null;
  deleted: boolean;
  createdAt: string;
  updatedAt: string;
  permissions: Record<string, string>;
  events: string[];
}

interface Token {
  token: string;
  installationId: number;
  expiresAt: number;
  repositoryIds: Set<number> | null;
  permissions: Record<string, string>;
  revoked: boolean;
}

interface CheckRun extends CheckRunRecord {
  repoId: number;
  suiteId: number;
}

interface Reply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

type Auth = { kind: "none" } | { kind: "jwt" } | { kind: "installation"; token: Token; installation: Installation };

interface Ctx {
  req: IncomingMessage;
  url: URL;
  params: Record<string, string>;
  body: any;
  auth: Auth;
  op: Operation;
}

interface Route {
  method: string;
  re: RegExp;
  /** The path in GitHub's description. */
  path: string;
  auth: "jwt" | "installation" | "any";
  handle(ctx: Ctx): Promise<Reply> | Reply;
}

const DEFAULT_PERMISSIONS = { checks: "write", contents: "read", metadata: "read", pull_requests: "read" };
const DEFAULT_EVENTS = ["push", "pull_request"];
const iso = (ms = Date.now()) => new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(".000Z", "Z");
const nodeId = (kind: string, id: number) => Buffer.from(`0${kind.length}:${kind}${id}`).toString("base64");

export interface GitHubDoubleOptions {
  appSlug?: string;
  /** The App's setup URL (see `setSetupUrl`). */
  setupUrl?: string;
  /**
   * The address to listen on: 127.0.0.1 by default; a 10.x address (the local
   * cluster's node address, 10.244.0.1) when pods or an in-cluster service must reach it.
   */
  host?: string;
}

export async function startGitHubDouble(o: GitHubDoubleOptions = {}): Promise<GitHubDouble> {
  const listenHost = o.host ?? "127.0.0.1";
  if (!/^(127|10)\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(listenHost))
    throw new Error(`the double listens on loopback or the local cluster's network only, not ${listenHost}`);
  const { privateKey, publicKey } = await generateKeyPairP("rsa", {
    modulusLength: 2048,
    publicKeyEncoding: { type: "spki", format: "pem" },
    privateKeyEncoding: { type: "pkcs1", format: "pem" },
  });
  const appKey: KeyObject = createPublicKey(publicKey);
  const root = await mkdtemp(join(tmpdir(), "github-double-"));
  const reposRoot = join(root, "repos");

  const appId = 100_000 + Math.floor(Math.random() * 800_000);
  const appSlug = o.appSlug ?? "codeplane-test";
  const clientId = `Iv23li${randomBytes(7).toString("hex")}`;
  const webhookSecret = randomBytes(20).toString("hex");
  const hookId = 400_000_000 + Math.floor(Math.random() * 1_000_000);
  const appCreatedAt = iso(Date.now() - 86_400_000);

  let nextId = 1000;
  const newId = () => ++nextId;
  const accounts = new Map<string, Account>();
  const repos = new Map<string, Repo>(); // by lower-case full name
  const installations = new Map<number, Installation>();
  const tokens = new Map<string, Token>();
  const issuedTokens: string[] = [];
  const checkRuns = new Map<number, CheckRun>();
  const suites = new Map<string, number>();
  const requests: RequestRecord[] = [];
  const violations: string[] = [];
  const faults: { method: string; re: RegExp; status: number; left: number }[] = [];
  const stalls: { method: string; re: RegExp; ms: number; left: number }[] = [];
  const timers = new Set<NodeJS.Timeout>();
  let setupUrl: string | undefined = o.setupUrl;
  const pendingInstalls: { installationId?: number; action: "install" | "update" | "request" }[] = [];
  const ZERO = "0".repeat(40);
  const creating = new Set<string>();
  const locks = new Map<string, Promise<unknown>>();

  /** Runs `fn` after every earlier call for the same repository (git writes one at a time). */
  function serial<T>(fullName: string, fn: () => Promise<T>): Promise<T> {
    const key = fullName.toLowerCase();
    const run = (locks.get(key) ?? Promise.resolve()).then(fn, fn);
    locks.set(
      key,
      run.catch(() => undefined),
    );
    return run;
  }

  /** Takes one use of the first fault or stall matching the request. */
  function take<T extends { method: string; re: RegExp; left: number }>(list: T[], method: string, path: string): T | undefined {
    const hit = list.find((f) => f.left > 0 && f.method === method && f.re.test(path));
    if (hit) hit.left--;
    return hit;
  }

  async function stall(method: string, path: string): Promise<void> {
    const s = take(stalls, method, path);
    if (!s) return;
    await new Promise<void>((resolve) => {
      const t = setTimeout(() => {
        timers.delete(t);
        resolve();
      }, s.ms);
      timers.add(t);
    });
  }
  const tampers: { method: string; re: RegExp; mutate: (b: any) => any; left: number }[] = [];

  let url = "";
  let apiUrl = "";
  let host = "";

  function account(login: string, type: "User" | "Organization" = "User"): Account {
    const key = login.toLowerCase();
    let a = accounts.get(key);
    if (!a) {
      a = { login, id: newId(), type };
      accounts.set(key, a);
    }
    return a;
  }

  function repoByName(fullName: string): Repo {
    const r = repos.get(fullName.toLowerCase());
    if (!r) throw new Error(`the double has no repository ${fullName}`);
    return r;
  }

  function installationById(id: number): Installation {
    const i = installations.get(id);
    if (!i) throw new Error(`the double has no installation ${id}`);
    return i;
  }

  /** Repositories an installation can see now. */
  function visible(inst: Installation): Repo[] {
    return [...repos.values()]
      .filter((r) => inst.selected.has(r.id) || (inst.selection === "all" && r.owner.login.toLowerCase() === inst.account.login.toLowerCase()))
      .sort((a, b) => a.id - b.id);
  }

  function tokenSees(t: Token, inst: Installation, repo: Repo): boolean {
    return visible(inst).includes(repo) && (t.repositoryIds === null || t.repositoryIds.has(repo.id));
  }

  // ---- JSON as GitHub renders it -------------------------------------------------------------

  function userJson(a: Account) {
    const u = `${apiUrl}/users/${a.login}`;
    return {
      login: a.login,
      id: a.id,
      node_id: nodeId(a.type, a.id),
      avatar_url: `${url}/avatars/u/${a.id}`,
      gravatar_id: "",
      url: u,
      html_url: `${url}/${a.login}`,
      followers_url: `${u}/followers`,
      following_url: `${u}/following{/other_user}`,
      gists_url: `${u}/gists{/gist_id}`,
      starred_url: `${u}/starred{/owner}{/repo}`,
      subscriptions_url: `${u}/subscriptions`,
      organizations_url: `${u}/orgs`,
      repos_url: `${u}/repos`,
      events_url: `${u}/events{/privacy}`,
      received_events_url: `${u}/received_events`,
      type: a.type,
      user_view_type: "public",
      site_admin: false,
    };
  }

  const appOwner = () => account("codeplane-admins", "Organization");

  function appJson() {
    return {
      id: appId,
      slug: appSlug,
      node_id: nodeId("Integration", appId),
      client_id: clientId,
      owner: userJson(appOwner()),
      name: appSlug,
      description: "codeplane's GitHub App (double)",
      external_url: `${url}/apps/${appSlug}`,
      html_url: `${url}/apps/${appSlug}`,
      created_at: appCreatedAt,
      updated_at: appCreatedAt,
      permissions: { ...DEFAULT_PERMISSIONS },
      events: [...DEFAULT_EVENTS],
      installations_count: [...installations.values()].filter((i) => !i.deleted).length,
    };
  }

  function installationJson(i: Installation) {
    return {
      id: i.id,
      client_id: clientId,
      account: userJson(i.account),
      repository_selection: i.selection,
      access_tokens_url: `${apiUrl}/app/installations/${i.id}/access_tokens`,
      repositories_url: `${apiUrl}/installation/repositories`,
      html_url:
        i.account.type === "Organization" ? `${url}/organizations/${i.account.login}/settings/installations/${i.id}` : `${url}/settings/installations/${i.id}`,
      app_id: appId,
      app_slug: appSlug,
      target_id: i.account.id,
      target_type: i.account.type,
      permissions: { ...i.permissions },
      events: [...i.events],
      created_at: i.createdAt,
      updated_at: i.updatedAt,
      single_file_name: null,
      has_multiple_single_files: false,
      single_file_paths: [],
      suspended_by: i.suspendedAt ? userJson(account("ghe-admin")) : null,
      suspended_at: i.suspendedAt,
    };
  }

  function repoJson(r: Repo, full = false) {
    const a = `${apiUrl}/repos/${r.fullName}`;
    const json: Record<string, unknown> = {
      id: r.id,
      node_id: nodeId("Repository", r.id),
      name: r.name,
      full_name: r.fullName,
      private: r.private,
      owner: userJson(r.owner),
      html_url: `${url}/${r.fullName}`,
      description: null,
      fork: false,
      url: a,
      forks_url: `${a}/forks`,
      keys_url: `${a}/keys{/key_id}`,
      collaborators_url: `${a}/collaborators{/collaborator}`,
      teams_url: `${a}/teams`,
      hooks_url: `${a}/hooks`,
      issue_events_url: `${a}/issues/events{/number}`,
      events_url: `${a}/events`,
      assignees_url: `${a}/assignees{/user}`,
      branches_url: `${a}/branches{/branch}`,
      tags_url: `${a}/tags`,
      blobs_url: `${a}/git/blobs{/sha}`,
      git_tags_url: `${a}/git/tags{/sha}`,
      git_refs_url: `${a}/git/refs{/sha}`,
      trees_url: `${a}/git/trees{/sha}`,
      statuses_url: `${a}/statuses/{sha}`,
      languages_url: `${a}/languages`,
      stargazers_url: `${a}/stargazers`,
      contributors_url: `${a}/contributors`,
      subscribers_url: `${a}/subscribers`,
      subscription_url: `${a}/subscription`,
      commits_url: `${a}/commits{/sha}`,
      git_commits_url: `${a}/git/commits{/sha}`,
      comments_url: `${a}/comments{/number}`,
      issue_comment_url: `${a}/issues/comments{/number}`,
      contents_url: `${a}/contents/{+path}`,
      compare_url: `${a}/compare/{base}...{head}`,
      merges_url: `${a}/merges`,
      archive_url: `${a}/{archive_format}{/ref}`,
      downloads_url: `${a}/downloads`,
      issues_url: `${a}/issues{/number}`,
      pulls_url: `${a}/pulls{/number}`,
      milestones_url: `${a}/milestones{/number}`,
      notifications_url: `${a}/notifications{?since,all,participating}`,
      labels_url: `${a}/labels{/name}`,
      releases_url: `${a}/releases{/id}`,
      deployments_url: `${a}/deployments`,
      created_at: r.createdAt,
      updated_at: r.updatedAt,
      pushed_at: r.pushedAt,
      git_url: `git://${host}/${r.fullName}.git`,
      ssh_url: `git@${host.replace(/:\d+$/, "")}:${r.fullName}.git`,
      clone_url: `${url}/${r.fullName}.git`,
      svn_url: `${url}/${r.fullName}`,
      homepage: null,
      size: 1,
      stargazers_count: 0,
      watchers_count: 0,
      language: null,
      has_issues: true,
      has_projects: true,
      has_downloads: true,
      has_wiki: true,
      has_pages: false,
      has_discussions: false,
      forks_count: 0,
      mirror_url: null,
      archived: false,
      disabled: false,
      open_issues_count: 0,
      license: null,
      allow_forking: true,
      is_template: false,
      web_commit_signoff_required: false,
      topics: [],
      visibility: r.private ? "private" : "public",
      forks: 0,
      open_issues: 0,
      watchers: 0,
      default_branch: r.defaultBranch,
    };
    if (full) {
      Object.assign(json, {
        temp_clone_token: r.private ? "" : null,
        allow_squash_merge: true,
        allow_merge_commit: true,
        allow_rebase_merge: true,
        allow_auto_merge: false,
        delete_branch_on_merge: false,
        allow_update_branch: false,
        use_squash_pr_title_as_default: false,
        squash_merge_commit_message: "COMMIT_MESSAGES",
        squash_merge_commit_title: "COMMIT_OR_PR_TITLE",
        merge_commit_message: "PR_TITLE",
        merge_commit_title: "MERGE_MESSAGE",
        network_count: 0,
        subscribers_count: 0,
      });
      if (r.owner.type === "Organization") json.organization = userJson(r.owner);
    }
    return json;
  }

  function checkRunJson(c: CheckRun) {
    const repo = [...repos.values()].find((r) => r.id === c.repoId)!;
    const a = `${apiUrl}/repos/${repo.fullName}`;
    return {
      id: c.id,
      name: c.name,
      node_id: nodeId("CheckRun", c.id),
      head_sha: c.headSha,
      external_id: c.externalId ?? "",
      url: `${a}/check-runs/${c.id}`,
      html_url: `${url}/${repo.fullName}/runs/${c.id}`,
      details_url: c.detailsUrl ?? `${url}/apps/${appSlug}`,
      status: c.status,
      conclusion: c.conclusion,
      started_at: c.startedAt,
      completed_at: c.completedAt,
      output: {
        title: c.output.title,
        summary: c.output.summary,
        text: c.output.text,
        annotations_count: c.output.annotationsCount,
        annotations_url: `${a}/check-runs/${c.id}/annotations`,
      },
      check_suite: { id: c.suiteId },
      app: appJson(),
      pull_requests: [],
    };
  }

  // ---- errors and helpers --------------------------------------------------------------------

  const error = (status: number, message: string, op?: Operation, extra: Record<string, unknown> = {}): Reply => ({
    status,
    body: {
      message,
      documentation_url: op?.docsUrl ?? `https://docs.github.com/enterprise-server@${GHES_VERSION}/rest`,
      status: String(status),
      ...extra,
    },
  });
  const notFound = (op?: Operation) => error(404, "Not Found", op);

  function paginate<T>(ctx: Ctx, items: T[]): { page: T[]; headers: Record<string, string> } {
    const perPage = Math.min(100, Math.max(1, Number(ctx.url.searchParams.get("per_page") ?? 30) || 30));
    const page = Math.max(1, Number(ctx.url.searchParams.get("page") ?? 1) || 1);
    const last = Math.max(1, Math.ceil(items.length / perPage));
    const link = (p: number) => {
      const q = new URLSearchParams(ctx.url.searchParams);
      q.set("per_page", String(perPage));
      q.set("page", String(p));
      return `<${apiUrl}${ctx.url.pathname.slice("/api/v3".length)}?${q}>`;
    };
    const rels: string[] = [];
    if (page > 1) rels.push(`${link(Math.min(page - 1, last))}; rel="prev"`);
    if (page < last) rels.push(`${link(page + 1)}; rel="next"`, `${link(last)}; rel="last"`);
    if (page > 1) rels.push(`${link(1)}; rel="first"`);
    return { page: items.slice((page - 1) * perPage, page * perPage), headers: rels.length ? { link: rels.join(", ") } : {} };
  }

  function lookupRepo(ctx: Ctx): Repo | undefined {
    const r = repos.get(`${ctx.params.owner}/${ctx.params.repo}`.toLowerCase());
    if (!r) return undefined;
    if (ctx.auth.kind === "installation" && tokenSees(ctx.auth.token, ctx.auth.installation, r)) return r;
    return r.private ? undefined : r;
  }

  /** The repository, readable and (for `write`) writable by the token's installation for `permission`. */
  function repoFor(ctx: Ctx, permission: string, level: "read" | "write"): Repo | Reply {
    const r = lookupRepo(ctx);
    if (!r) return notFound(ctx.op);
    if (ctx.auth.kind !== "installation" || !tokenSees(ctx.auth.token, ctx.auth.installation, r)) {
      return error(403, "Resource not accessible by integration", ctx.op);
    }
    const granted = ctx.auth.token.permissions[permission];
    if (!granted || (level === "write" && granted !== "write")) return error(403, "Resource not accessible by integration", ctx.op);
    return r;
  }

  const isReply = (x: unknown): x is Reply => typeof x === "object" && x !== null && "status" in x && !("fullName" in x);

  function validUrl(s: string): boolean {
    try {
      const u = new URL(s);
      return u.protocol === "http:" || u.protocol === "https:";
    } catch {
      return false;
    }
  }

  function snapshot(c: CheckRun): CheckRunState {
    return {
      name: c.name,
      headSha: c.headSha,
      status: c.status,
      conclusion: c.conclusion,
      detailsUrl: c.detailsUrl,
      externalId: c.externalId,
      startedAt: c.startedAt,
      completedAt: c.completedAt,
      output: { ...c.output },
    };
  }

  /** GitHub's rules for a check-run create or update beyond what the schema says; a Reply when broken. */
  function applyCheckRun(ctx: Ctx, c: CheckRun, body: Record<string, any>, creating: boolean): Reply | undefined {
    const invalid = (message: string) => error(422, message, ctx.op);
    if (body.conclusion === "stale") return invalid("Invalid request.\n\nOnly GitHub can set a conclusion of stale.");
    let status: CheckRunState["status"] = body.status ?? (creating ? "queued" : c.status);
    if (body.conclusion !== undefined) status = "completed";
    if (body.completed_at !== undefined && body.conclusion === undefined && c.conclusion === null) {
      return invalid("Invalid request.\n\nNo conclusion was supplied with completed_at.");
    }
    if (status === "completed" && body.conclusion === undefined && (creating || body.status === "completed")) {
      return invalid("Invalid request.\n\nconclusion wasn't supplied.");
    }
    if (["waiting", "requested", "pending"].includes(status)) return invalid(`Invalid request.\n\nOnly GitHub Actions can set a status of ${status}.`);
    if (body.details_url !== undefined && !validUrl(body.details_url)) {
      return error(422, "Validation Failed", ctx.op, { errors: [{ resource: "CheckRun", code: "invalid", field: "details_url" }] });
    }
    if (body.output !== undefined && (typeof body.output.title !== "string" || typeof body.output.summary !== "string")) {
      return invalid("Invalid request.\n\nFor 'properties/output', title and summary are required.");
    }
    const now = iso();
    if (body.name !== undefined) c.name = body.name;
    if (body.details_url !== undefined) c.detailsUrl = body.details_url;
    if (body.external_id !== undefined) c.externalId = body.external_id;
    if (body.started_at !== undefined) c.startedAt = iso(Date.parse(body.started_at));
    else if (creating) c.startedAt = now;
    c.status = status;
    if (status === "completed") {
      if (body.conclusion !== undefined) c.conclusion = body.conclusion;
      c.completedAt = body.completed_at !== undefined ? iso(Date.parse(body.completed_at)) : (c.completedAt ?? now);
    } else {
      c.conclusion = null;
      c.completedAt = null;
    }
    if (body.output !== undefined) {
      c.output.title = body.output.title;
      c.output.summary = body.output.summary;
      if (body.output.text !== undefined) c.output.text = body.output.text;
      c.output.annotationsCount += Array.isArray(body.output.annotations) ? body.output.annotations.length : 0;
    }
    c.history.push({ action: creating ? "created" : "updated", at: now, request: structuredClone(body), state: snapshot(c) });
    return undefined;
  }

  // ---- routes --------------------------------------------------------------------------------

  const routes: Route[] = [];
  const route = (method: string, path: string, auth: Route["auth"], handle: Route["handle"]) => {
    const re = new RegExp(
      "^" +
        path.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\{([^}]+)\}/g, (_m, name: string) => (name === "ref" ? `(?<${name}>.+)` : `(?<${name}>[^/]+)`)) +
        "$",
    );
    routes.push({ method, re, path, auth, handle });
  };

  route("GET", "/app", "jwt", () => ({ status: 200, body: appJson() }));

  route("GET", "/app/installations", "jwt", (ctx) => {
    const all = [...installations.values()].filter((i) => !i.deleted).sort((a, b) => a.id - b.id);
    const { page, headers } = paginate(ctx, all);
    return { status: 200, body: page.map(installationJson), headers };
  });

  route("GET", "/app/installations/{installation_id}", "jwt", (ctx) => {
    const inst = installations.get(Number(ctx.params.installation_id));
    if (!inst || inst.deleted) return notFound(ctx.op);
    return { status: 200, body: installationJson(inst) };
  });

  route("POST", "/app/installations/{installation_id}/access_tokens", "jwt", (ctx) => {
    const inst = installations.get(Number(ctx.params.installation_id));
    if (!inst || inst.deleted) return notFound(ctx.op);
    if (inst.suspendedAt) return error(403, "This installation has been suspended", ctx.op);
    const body = (ctx.body ?? {}) as { repositories?: string[]; repository_ids?: number[]; permissions?: Record<string, string> };
    const seen = visible(inst);
    let scoped: Repo[] | null = null;
    if (body.repositories !== undefined || body.repository_ids !== undefined) {
      scoped = [];
      for (const name of body.repositories ?? []) {
        const r = seen.find((x) => x.name.toLowerCase() === name.toLowerCase() || x.fullName.toLowerCase() === name.toLowerCase());
        if (!r) return error(422, "There is at least one repository that does not exist or is not accessible to the parent installation.", ctx.op);
        scoped.push(r);
      }
      for (const id of body.repository_ids ?? []) {
        const r = seen.find((x) => x.id === id);
        if (!r) return error(422, "There is at least one repository that does not exist or is not accessible to the parent installation.", ctx.op);
        scoped.push(r);
      }
    }
    let permissions = { ...inst.permissions };
    if (body.permissions) {
      for (const [k, v] of Object.entries(body.permissions)) {
        const has = inst.permissions[k];
        if (!has || (v === "write" && has !== "write")) return error(422, "The permissions requested are not granted to this installation.", ctx.op);
      }
      permissions = { ...body.permissions };
    }
    const token = `ghs_${randomBytes(27).toString("base64url").replace(/[-_]/g, "x").slice(0, 36)}`;
    const expiresAt = Date.now() + 3600_000;
    tokens.set(token, {
      token,
      installationId: inst.id,
      expiresAt,
      repositoryIds: scoped ? new Set(scoped.map((r) => r.id)) : null,
      permissions,
      revoked: false,
    });
    issuedTokens.push(token);
    const out: Record<string, unknown> = { token, expires_at: iso(expiresAt), permissions, repository_selection: scoped ? "selected" : inst.selection };
    if (scoped) out.repositories = scoped.map((r) => repoJson(r));
    return { status: 201, body: out };
  });

  route("GET", "/installation/repositories", "installation", (ctx) => {
    if (ctx.auth.kind !== "installation") return error(403, "Resource not accessible by integration", ctx.op);
    const { token, installation } = ctx.auth;
    const all = visible(installation).filter((r) => token.repositoryIds === null || token.repositoryIds.has(r.id));
    const { page, headers } = paginate(ctx, all);
    return {
      status: 200,
      body: {
        total_count: all.length,
        repositories: page.map((r) => repoJson(r)),
        repository_selection: token.repositoryIds ? "selected" : installation.selection,
      },
      headers,
    };
  });

  route("GET", "/repos/{owner}/{repo}", "any", (ctx) => {
    const r = lookupRepo(ctx);
    if (!r) return notFound(ctx.op);
    return { status: 200, body: repoJson(r, true) };
  });

  route("GET", "/repos/{owner}/{repo}/installation", "jwt", (ctx) => {
    const r = repos.get(`${ctx.params.owner}/${ctx.params.repo}`.toLowerCase());
    const inst = r && [...installations.values()].find((i) => !i.deleted && visible(i).includes(r));
    if (!inst) return notFound(ctx.op);
    return { status: 200, body: installationJson(inst) };
  });

  route("POST", "/repos/{owner}/{repo}/check-runs", "installation", async (ctx) => {
    const r = repoFor(ctx, "checks", "write");
    if (isReply(r)) return r;
    const body = ctx.body as Record<string, any>;
    const sha = /^[0-9a-f]{40}$/.test(body.head_sha) ? await resolveRef(r.dir, body.head_sha) : undefined;
    if (!sha) return error(422, `No commit found for SHA: ${body.head_sha}`, ctx.op);
    const suiteKey = `${r.id}:${sha}`;
    if (!suites.has(suiteKey)) suites.set(suiteKey, newId());
    const c: CheckRun = {
      id: newId(),
      repoId: r.id,
      repository: r.fullName,
      suiteId: suites.get(suiteKey)!,
      name: body.name,
      headSha: sha,
      status: "queued",
      conclusion: null,
      detailsUrl: null,
      externalId: null,
      startedAt: null,
      completedAt: null,
      output: { title: null, summary: null, text: null, annotationsCount: 0 },
      history: [],
    };
    const broken = applyCheckRun(ctx, c, body, true);
    if (broken) return broken;
    checkRuns.set(c.id, c);
    return { status: 201, body: checkRunJson(c) };
  });

  route("GET", "/repos/{owner}/{repo}/check-runs/{check_run_id}", "installation", (ctx) => {
    const r = repoFor(ctx, "checks", "read");
    if (isReply(r)) return r;
    const c = checkRuns.get(Number(ctx.params.check_run_id));
    if (!c || c.repoId !== r.id) return notFound(ctx.op);
    return { status: 200, body: checkRunJson(c) };
  });

  route("PATCH", "/repos/{owner}/{repo}/check-runs/{check_run_id}", "installation", (ctx) => {
    const r = repoFor(ctx, "checks", "write");
    if (isReply(r)) return r;
    const c = checkRuns.get(Number(ctx.params.check_run_id));
    if (!c || c.repoId !== r.id) return notFound(ctx.op);
    const draft: CheckRun = { ...c, output: { ...c.output }, history: c.history };
    const broken = applyCheckRun(ctx, draft, ctx.body as Record<string, any>, false);
    if (broken) return broken;
    Object.assign(c, draft);
    return { status: 200, body: checkRunJson(c) };
  });

  route("GET", "/repos/{owner}/{repo}/commits/{ref}/check-runs", "installation", async (ctx) => {
    const r = repoFor(ctx, "checks", "read");
    if (isReply(r)) return r;
    const sha = await resolveRef(r.dir, ctx.params.ref!);
    if (!sha) return error(422, `No commit found for SHA: ${ctx.params.ref}`, ctx.op);
    const q = ctx.url.searchParams;
    let runs = [...checkRuns.values()].filter((c) => c.repoId === r.id && c.headSha === sha);
    if (q.get("check_name")) runs = runs.filter((c) => c.name === q.get("check_name"));
    if (q.get("status")) runs = runs.filter((c) => c.status === q.get("status"));
    if ((q.get("filter") ?? "latest") === "latest") {
      const newest = new Map<string, CheckRun>();
      for (const c of runs) if ((newest.get(c.name)?.id ?? 0) < c.id) newest.set(c.name, c);
      runs = [...newest.values()];
    }
    runs.sort((a, b) => b.id - a.id);
    const { page, headers } = paginate(ctx, runs);
    return { status: 200, body: { total_count: runs.length, check_runs: page.map(checkRunJson) }, headers };
  });

  // ---- the HTTP server -----------------------------------------------------------------------

  function credential(req: IncomingMessage): { scheme: string; value: string } | undefined {
    const h = req.headers.authorization;
    if (!h) return undefined;
    const m = /^(\S+)\s+(.+)$/.exec(h.trim());
    return m ? { scheme: m[1]!.toLowerCase(), value: m[2]!.trim() } : { scheme: "", value: h };
  }

  /** A live token and its installation, or why not. */
  function liveToken(value: string): { token: Token; installation: Installation } | { problem: 401 | 403 } {
    const t = tokens.get(value);
    if (!t || t.revoked || t.expiresAt <= Date.now()) return { problem: 401 };
    const inst = installations.get(t.installationId);
    if (!inst || inst.deleted) return { problem: 401 };
    if (inst.suspendedAt) return { problem: 403 };
    return { token: t, installation: inst };
  }

  function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
    const text = body === undefined ? "" : JSON.stringify(body);
    res.writeHead(status, {
      "content-type": "application/json; charset=utf-8",
      "x-github-media-type": "github.v3; format=json",
      "x-github-api-version-selected": API_VERSION,
      "x-github-enterprise-version": `${GHES_VERSION}.0`,
      "x-github-request-id": randomUUID().toUpperCase().slice(0, 23),
      "x-ratelimit-limit": "5000",
      "x-ratelimit-remaining": "4999",
      "x-ratelimit-reset": String(Math.floor(Date.now() / 1000) + 3600),
      "x-ratelimit-used": "1",
      "x-ratelimit-resource": "core",
      "content-length": String(Buffer.byteLength(text)),
      ...headers,
    });
    res.end(text);
  }

  async function readBody(req: IncomingMessage, limit: number): Promise<Buffer | "too large"> {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const c of req) {
      size += (c as Buffer).length;
      if (size > limit) return "too large";
      chunks.push(c as Buffer);
    }
    return Buffer.concat(chunks);
  }

  async function api(req: IncomingMessage, res: ServerResponse, u: URL) {
    const method = req.method ?? "GET";
    const path = u.pathname.slice("/api/v3".length) || "/";
    const cred = credential(req);
    let authKind: RequestRecord["auth"] = "none";
    if (cred) authKind = cred.value.split(".").length === 3 ? "jwt" : "installation";
    const finish = (status: number, body: unknown, headers: Record<string, string> = {}, op?: Operation) => {
      for (const t of tampers) {
        if (t.left > 0 && t.method === method && t.re.test(u.pathname)) {
          t.left--;
          body = t.mutate(structuredClone(body));
          break;
        }
      }
      if (op) {
        const lower = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
        const problems = op.checkResponse(status, { "content-type": "application/json; charset=utf-8", ...lower }, body);
        if (problems.length) violations.push(`response to ${method} ${u.pathname}${u.search} (${op.operationId}) ${status}: ${problems.join("; ")}`);
      }
      requests.push({ method, path: `${u.pathname}${u.search}`, status, auth: authKind });
      send(res, status, body, headers);
    };

    const raw = await readBody(req, 25 * 1024 * 1024);
    await stall(method, u.pathname);
    const found = routes.map((r) => ({ r, m: r.re.exec(path) })).find((x) => x.m && x.r.method === method);
    const op = found ? operation(method, found.r.path) : undefined;

    const fault = take(faults, method, u.pathname);
    if (fault) {
      const e = error(fault.status, fault.status >= 500 ? "Server Error" : "Injected failure", op);
      return finish(e.status, e.body, {}, op);
    }

    if (!found || !op) {
      const described = findDescribedOperation(method, path);
      if (described)
        violations.push(`request ${method} ${u.pathname}: ${described.operationId} is in GitHub's description but the double does not implement it`);
      const e = error(404, "Not Found");
      return finish(e.status, e.body);
    }
    const version = req.headers["x-github-api-version"];
    if (version !== undefined && version !== API_VERSION) {
      const e = error(400, `API version ${version} is not supported.`, op);
      return finish(e.status, e.body, {}, op);
    }

    // Authentication, as the route wants it.
    let auth: Auth = { kind: "none" };
    if (cred) {
      if (cred.scheme !== "bearer" && cred.scheme !== "token") {
        const e = error(401, "Bad credentials", op);
        return finish(e.status, e.body, {}, op);
      }
      if (authKind === "jwt") {
        const v = verifyAppJwt(cred.value, appKey, [String(appId), clientId]);
        if (!v.ok) {
          const e = error(401, v.message, op);
          return finish(e.status, e.body, {}, op);
        }
        auth = { kind: "jwt" };
      } else {
        const live = liveToken(cred.value);
        if ("problem" in live) {
          const e = live.problem === 403 ? error(403, "This installation has been suspended", op) : error(401, "Bad credentials", op);
          return finish(e.status, e.body, {}, op);
        }
        auth = { kind: "installation", ...live };
      }
    }
    if (found.r.auth === "jwt" && auth.kind !== "jwt") {
      const e = auth.kind === "none" ? error(401, "A JSON web token could not be decoded", op) : error(403, "Resource not accessible by integration", op);
      return finish(e.status, e.body, {}, op);
    }
    if (found.r.auth === "installation" && auth.kind !== "installation") {
      const e = auth.kind === "none" ? error(401, "Requires authentication", op) : error(403, "Resource not accessible by integration", op);
      return finish(e.status, e.body, {}, op);
    }

    // The request against GitHub's description.
    let body: unknown = undefined;
    if (raw === "too large") {
      const e = error(413, "Payload too large", op);
      return finish(e.status, e.body, {}, op);
    }
    if (raw.length > 0) {
      try {
        body = JSON.parse(raw.toString("utf8"));
      } catch {
        violations.push(`request ${method} ${u.pathname}${u.search} (${op.operationId}): the body is not JSON`);
        const e = error(400, "Problems parsing JSON", op);
        return finish(e.status, e.body, {}, op);
      }
    }
    let params: Record<string, string>;
    try {
      params = Object.fromEntries(Object.entries(found.m!.groups ?? {}).map(([k, v]) => [k, decodeURIComponent(v)]));
    } catch {
      const e = notFound(op);
      return finish(e.status, e.body, {}, op);
    }
    const problems = op.checkRequest({ pathParams: params, query: u.searchParams, contentType: req.headers["content-type"], body });
    if (problems.length) {
      violations.push(`request ${method} ${u.pathname}${u.search} (${op.operationId}): ${problems.join("; ")}`);
      const e = error(422, `Invalid request.\n\n${problems.join("\n")}`, op);
      return finish(e.status, e.body, {}, op);
    }

    try {
      const reply = await found.r.handle({ req, url: u, params, body, auth, op });
      finish(reply.status, reply.body, reply.headers ?? {}, op);
    } catch (err) {
      violations.push(`double failed on ${method} ${u.pathname}: ${(err as Error).stack ?? err}`);
      const e = error(500, "Server Error", op);
      finish(e.status, e.body, {}, op);
    }
  }

  async function gitRequest(req: IncomingMessage, res: ServerResponse, u: URL, owner: string, name: string, rest: string) {
    const method = req.method ?? "GET";
    const cred = credential(req);
    let authKind: RequestRecord["auth"] = "none";
    const done = (status: number) => requests.push({ method, path: `${u.pathname}${u.search}`, status, auth: authKind });
    const deny = (status: number, message: string, headers: Record<string, string> = {}) => {
      req.resume();
      res.writeHead(status, { "content-type": "text/plain; charset=utf-8", ...headers });
      res.end(message);
      done(status);
    };
    const unauthorized = () =>
      deny(401, "Invalid username or token. Password authentication is not supported for Git operations.\n", { "www-authenticate": 'Basic realm="GitHub"' });

    await stall(method, u.pathname);
    const fault = take(faults, method, u.pathname);
    if (fault) return deny(fault.status, fault.status >= 500 ? "Server Error\n" : "Injected failure\n");

    const repo = repos.get(`${owner}/${name}`.toLowerCase());
    let live: ReturnType<typeof liveToken> | undefined;
    if (cred) {
      authKind = "installation";
      if (cred.scheme !== "basic") return unauthorized();
      const decoded = Buffer.from(cred.value, "base64").toString("utf8");
      const i = decoded.indexOf(":");
      const user = i < 0 ? decoded : decoded.slice(0, i);
      const password = i < 0 ? "" : decoded.slice(i + 1);
      if (user !== "x-access-token") return unauthorized();
      live = liveToken(password);
      if ("problem" in live) return unauthorized();
    }
    const sees = repo && live && !("problem" in live) && tokenSees(live.token, live.installation, repo);
    if (!repo || (repo.private && !sees)) return cred ? deny(404, "Repository not found.\n") : unauthorized();
    if (repo.private && live && !("problem" in live) && !live.token.permissions.contents) return deny(403, "Write access to repository not granted.\n");
    if (rest === "git-receive-pack" || u.searchParams.get("service") === "git-receive-pack") {
      return deny(403, "Write access to repository not granted.\n");
    }
    if (!(method === "GET" && rest === "info/refs") && !(method === "POST" && rest === "git-upload-pack")) return deny(404, "Not Found\n");
    const status = await httpBackend(req, res, {
      projectRoot: reposRoot,
      pathInfo: `/${relative(reposRoot, repo.dir).split(sep).join("/")}/${rest}`,
      query: u.search.slice(1),
      ...(live && !("problem" in live) ? { remoteUser: "x-access-token" } : {}),
    });
    done(status);
  }

  const server = createServer((req, res) => {
    const u = new URL(req.url ?? "/", "http://double.invalid");
    const fail = (err: unknown) => {
      violations.push(`double failed on ${req.method} ${u.pathname}: ${(err as Error)?.stack ?? err}`);
      if (!res.headersSent) res.writeHead(500);
      res.end();
    };
    if (u.pathname === "/api/v3" || u.pathname.startsWith("/api/v3/")) return void api(req, res, u).catch(fail);
    const g = /^\/([^/]+)\/([^/]+?)(?:\.git)?\/(info\/refs|git-upload-pack|git-receive-pack|HEAD|objects\/.*)$/.exec(u.pathname);
    if (g) return void gitRequest(req, res, u, decodeURIComponent(g[1]!), decodeURIComponent(g[2]!), g[3]!).catch(fail);
    req.resume();
    const web = /^\/([^/]+)\/([^/]+)\/?$/.exec(u.pathname);
    const repo = web && repos.get(`${web[1]}/${web[2]}`.toLowerCase());
    if (repo && !repo.private) {
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
      return void res.end(`<!doctype html><title>${repo.fullName}</title><h1>${repo.fullName}</h1>\n`);
    }
    if (
      (u.pathname === `/apps/${appSlug}/installations/new` || u.pathname === `/github-apps/${appSlug}/installations/new`) &&
      setupUrl &&
      pendingInstalls.length
    ) {
      const target = new URL(setupUrl);
      const next = pendingInstalls.shift()!;
      if (next.installationId !== undefined) target.searchParams.set("installation_id", String(next.installationId));
      target.searchParams.set("setup_action", next.action);
      const state = u.searchParams.get("state");
      if (state !== null) target.searchParams.set("state", state);
      requests.push({ method: req.method ?? "GET", path: `${u.pathname}${u.search}`, status: 302, auth: "none" });
      res.writeHead(302, { location: target.toString(), "content-type": "text/html; charset=utf-8" });
      return void res.end("<!doctype html><title>Redirecting</title>\n");
    }
    if (
      [`/apps/${appSlug}`, `/github-apps/${appSlug}`, `/apps/${appSlug}/installations/new`, `/github-apps/${appSlug}/installations/new`].includes(u.pathname)
    ) {
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
      return void res.end(`<!doctype html><title>${appSlug}</title><h1>Install ${appSlug}</h1>\n`);
    }
    res.writeHead(404, { "content-type": "text/html; charset=utf-8" });
    res.end("<!doctype html><title>Page not found</title>\n");
  });
  server.keepAliveTimeout = 5000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, listenHost, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  host = `${listenHost}:${port}`;
  url = `http://${host}`;
  apiUrl = `${url}/api/v3`;

  async function createRepository(r: Parameters<GitHubDouble["addRepository"]>[0], fullName: string) {
    const defaultBranch = r.defaultBranch ?? "main";
    const dir = repoDir(reposRoot, r.owner, r.name);
    await initBare(dir, defaultBranch);
    const headSha = await commitFiles(dir, defaultBranch, r.files, { message: "Initial commit" });
    const now = iso();
    const repo: Repo = {
      id: newId(),
      owner: account(r.owner, accounts.get(r.owner.toLowerCase())?.type ?? "User"),
      name: r.name,
      fullName,
      private: r.private,
      defaultBranch,
      dir,
      createdAt: now,
      updatedAt: now,
      pushedAt: now,
      commits: new Map([[headSha, await commitInfo(dir, headSha)]]),
      branches: new Map([[defaultBranch, headSha]]),
      pushes: new Map([[`refs/heads/${defaultBranch}`, { before: ZERO, after: headSha }]]),
    };
    repos.set(fullName.toLowerCase(), repo);
    if (r.installationId !== undefined) installationById(r.installationId).selected.add(repo.id);
    return { id: repo.id, fullName, cloneUrl: `${url}/${fullName}.git`, headSha, defaultBranch };
  }

  // ---- the test-facing side ------------------------------------------------------------------

  const world: World = {
    get url() {
      return url;
    },
    get apiUrl() {
      return apiUrl;
    },
    appId,
    appSlug,
    hookId,
    webhookSecret,
    repo(fullName) {
      const r = repoByName(fullName);
      return {
        json: repoJson(r),
        defaultBranch: r.defaultBranch,
        fullName: r.fullName,
        private: r.private,
        owner: r.owner,
        commits: r.commits,
        branches: r.branches,
        pushes: r.pushes,
      };
    },
    installation(id) {
      const i = installationById(id);
      return {
        json: installationJson(i),
        repositories: visible(i).map((r) => repoJson(r)),
        selection: i.selection,
        account: i.account,
        accountJson: userJson(i.account),
      };
    },
    installationFor(fullName) {
      const r = repoByName(fullName);
      return [...installations.values()].find((i) => visible(i).includes(r))?.id;
    },
    firstInstallation() {
      return [...installations.values()].find((i) => !i.deleted)?.id ?? [...installations.keys()][0];
    },
    firstRepository(installationId) {
      const i = installationId === undefined ? undefined : installations.get(installationId);
      const list = i ? visible(i) : [...repos.values()];
      return list[0]?.fullName;
    },
    user(login) {
      return userJson(account(login));
    },
  };

  const double: GitHubDouble = {
    url,
    apiUrl,
    appId,
    appSlug,
    privateKey,
    webhookSecret,
    requests,
    violations,
    issuedTokens,

    addInstallation({ account: a, repositorySelection }) {
      const acct = account(a.login, a.type);
      acct.type = a.type;
      const now = iso();
      const inst: Installation = {
        id: newId(),
        account: acct,
        selection: repositorySelection ?? "selected",
        selected: new Set(),
        suspendedAt: null,
        deleted: false,
        createdAt: now,
        updatedAt: now,
        permissions: { ...DEFAULT_PERMISSIONS },
        events: [...DEFAULT_EVENTS],
      };
      installations.set(inst.id, inst);
      return { id: inst.id };
    },

    async addRepository(r) {
      // GitHub keeps an account's own spelling of its login.
      const fullName = `${accounts.get(r.owner.toLowerCase())?.login ?? r.owner}/${r.name}`;
      if (!/^[A-Za-z0-9-]+$/.test(r.owner) || !/^[A-Za-z0-9._-]+$/.test(r.name) || r.name.endsWith(".git"))
        throw new Error(`unusable repository name ${fullName}`);
      if (repos.has(fullName.toLowerCase()) || creating.has(fullName.toLowerCase())) throw new Error(`repository ${fullName} exists`);
      if (r.installationId !== undefined) installationById(r.installationId);
      creating.add(fullName.toLowerCase());
      try {
        return await serial(fullName, () => createRepository(r, fullName));
      } finally {
        creating.delete(fullName.toLowerCase());
      }
    },

    async push(fullName, files, o = {}) {
      const r = repoByName(fullName);
      return serial(fullName, async () => {
        const branch = o.branch ?? r.defaultBranch;
        const before = r.branches.get(branch) ?? ZERO;
        const sha = await commitFiles(r.dir, branch, files, { message: o.message ?? "Update files", from: `refs/heads/${r.defaultBranch}` });
        r.pushedAt = r.updatedAt = iso();
        r.commits.set(sha, await commitInfo(r.dir, sha));
        r.branches.set(branch, sha);
        r.pushes.set(`refs/heads/${branch}`, { before, after: sha });
        return sha;
      });
    },

    async tag(fullName, name, sha) {
      const r = repoByName(fullName);
      return serial(fullName, async () => {
        const target = sha ?? r.branches.get(r.defaultBranch)!;
        if (!(await resolveRef(r.dir, target))) throw new Error(`no commit ${target} in ${fullName}`);
        await git(["--git-dir", r.dir, "update-ref", `refs/tags/${name}`, target]);
        r.pushes.set(`refs/tags/${name}`, { before: ZERO, after: target });
        r.pushedAt = iso();
        return target;
      });
    },
    stallNext(method, pathPattern, ms, times = 1) {
      stalls.push({ method: method.toUpperCase(), re: pathPattern, ms, left: times });
    },

    setSetupUrl(u) {
      setupUrl = u;
    },

    installOnNextVisit(installationId, o = {}) {
      installationById(installationId);
      pendingInstalls.push({ installationId, action: o.setupAction ?? "install" });
    },

    requestOnNextVisit() {
      pendingInstalls.push({ action: "request" });
    },

    grantRepository(installationId, fullName) {
      const inst = installationById(installationId);
      inst.selected.add(repoByName(fullName).id);
      inst.updatedAt = iso();
    },

    revokeRepository(installationId, fullName) {
      const inst = installationById(installationId);
      const r = repoByName(fullName);
      if (inst.selection === "all") {
        // GitHub turns an "all repositories" installation into a selection without that one.
        for (const v of visible(inst)) inst.selected.add(v.id);
        inst.selection = "selected";
      }
      inst.selected.delete(r.id);
      inst.updatedAt = iso();
    },

    suspend(installationId) {
      const inst = installationById(installationId);
      inst.suspendedAt = inst.updatedAt = iso();
    },

    unsuspend(installationId) {
      const inst = installationById(installationId);
      inst.suspendedAt = null;
      inst.updatedAt = iso();
    },

    deleteInstallation(installationId) {
      const inst = installationById(installationId);
      inst.deleted = true;
      for (const t of tokens.values()) if (t.installationId === installationId) t.revoked = true;
    },

    expireTokens() {
      for (const t of tokens.values()) t.revoked = true;
    },

    failNext(method, pathPattern, status, times = 1) {
      faults.push({ method: method.toUpperCase(), re: pathPattern, status, left: times });
    },

    tamperNext(method, pathPattern, mutate, times = 1) {
      tampers.push({ method: method.toUpperCase(), re: pathPattern, mutate, left: times });
    },

    checkRuns(fullName) {
      const r = repoByName(fullName);
      return [...checkRuns.values()]
        .filter((c) => c.repoId === r.id)
        .sort((a, b) => a.id - b.id)
        .map((c) => {
          const { repoId: _r, suiteId: _s, ...rec } = structuredClone(c);
          return rec;
        });
    },

    tokensIssued() {
      return issuedTokens.length;
    },

    takeViolations() {
      return violations.splice(0, violations.length);
    },

    repositoryPath(fullName) {
      return repoByName(fullName).dir;
    },

    webhook(event, o = {}) {
      return buildWebhook(world, event, o);
    },

    async deliver(targetUrl, event, o = {}) {
      const target = new URL(targetUrl);
      if (!["127.0.0.1", "localhost", "[::1]"].includes(target.hostname) && !target.hostname.startsWith("10.")) {
        throw new Error(`the double delivers to loopback and the local cluster only, not ${target.host}`);
      }
      const { headers, body } = buildWebhook(world, event, o);
      // Signed by Octokit's own implementation; it must agree with the synchronous signature.
      const signature = await sign(o.secret ?? webhookSecret, body);
      if (signature !== headers["x-hub-signature-256"]) throw new Error("webhook signatures disagree");
      return fetch(targetUrl, { method: "POST", headers: { ...headers, "x-hub-signature-256": signature }, body });
    },

    async close() {
      for (const t of timers) clearTimeout(t);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await rm(root, { recursive: true, force: true });
    },
  };
  return double;
}

export { git };
export { ERRATA, timings as validationTimings } from "./openapi.ts";
