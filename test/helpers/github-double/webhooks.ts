import { createHmac, randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { CommitInfo } from "./git.ts";
import { formatErrors, webhookKeys, webhookValidator } from "./openapi.ts";

// Webhook deliveries as GitHub would send them to the App: the body starts
// from one of GitHub's example payloads for the event and action
// (@octokit/webhooks-examples), its github.com URLs and example identities are
// replaced by the double's, and the parts that matter (installation,
// repository, commits, refs, pull request heads) are rebuilt from the
// double's state. The result must validate against GitHub's webhook schema
// for that event and action (@octokit/openapi-webhooks), or building it
// throws: a test can never be fed a payload GitHub would not send.

const require = createRequire(import.meta.url);

export interface WebhookOptions {
  action?: string;
  installationId?: number;
  /** Full name of one of the double's repositories. */
  repository?: string;
  sha?: string;
  ref?: string;
  /** Deep-merged into the payload last (objects merge, anything else replaces; null removes a key). */
  overrides?: object;
  /** Signs with this secret instead of the App's. */
  secret?: string;
  deliveryId?: string;
}

type Json = Record<string, any>;

/** What the webhook builder needs from the double. */
export interface World {
  readonly url: string;
  readonly apiUrl: string;
  appId: number;
  appSlug: string;
  hookId: number;
  webhookSecret: string;
  repo(fullName: string): {
    json: Json;
    defaultBranch: string;
    fullName: string;
    private: boolean;
    owner: { login: string; id: number; type: "User" | "Organization" };
    commits: Map<string, CommitInfo>;
    branches: Map<string, string>;
    pushes: Map<string, { before: string; after: string }>;
  };
  installation(id: number): {
    json: Json;
    repositories: Json[];
    selection: "all" | "selected";
    account: { login: string; id: number; type: string };
    accountJson: Json;
  };
  installationFor(fullName: string): number | undefined;
  firstInstallation(): number | undefined;
  firstRepository(installationId: number | undefined): string | undefined;
  user(login: string): Json;
}

interface ExampleSet {
  name: string;
  examples: Json[];
}

let examples: ExampleSet[] | undefined;

function loadExamples(): ExampleSet[] {
  return (examples ??= JSON.parse(readFileSync(require.resolve("@octokit/webhooks-examples/api.github.com/index.json"), "utf8")));
}

const ZERO = "0".repeat(40);
const isObj = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/;

/** `ours` over `theirs`, recursively. */
function overlay(theirs: unknown, ours: unknown): unknown {
  if (isObj(theirs) && isObj(ours)) {
    const out: Json = { ...theirs };
    for (const [k, v] of Object.entries(ours)) out[k] = k in theirs ? overlay(theirs[k], v) : v;
    return out;
  }
  return ours;
}

/**
 * Some payloads carry times as epoch seconds where the REST API has ISO
 * strings (a push's repository.created_at and pushed_at), others the other
 * way round: where GitHub's schema wants the other representation of a time,
 * convert it. Returns whether anything changed.
 */
function fixTimes(payload: Json, errors: { keyword: string; instancePath: string; params: any }[]): boolean {
  let changed = false;
  for (const e of errors) {
    if (e.keyword !== "type") continue;
    const path = e.instancePath
      .split("/")
      .slice(1)
      .map((p) => p.replace(/~1/g, "/").replace(/~0/g, "~"));
    const key = path.pop();
    if (key === undefined) continue;
    const parent = path.reduce((acc: any, k) => acc?.[k], payload);
    if (!isObj(parent) && !Array.isArray(parent)) continue;
    const value = (parent as any)[key];
    const want = String(e.params.type);
    if (typeof value === "string" && ISO.test(value) && /integer|number/.test(want)) {
      (parent as any)[key] = Math.floor(Date.parse(value) / 1000);
      changed = true;
    } else if (typeof value === "number" && /string/.test(want) && /(_at|timestamp)$/.test(key)) {
      (parent as any)[key] = new Date(value * 1000).toISOString().replace(".000Z", "Z");
      changed = true;
    }
  }
  return changed;
}

function deepMerge(base: Json, extra: Json): Json {
  const out: Json = { ...base };
  for (const [k, v] of Object.entries(extra)) {
    if (v === null) delete out[k];
    else if (isObj(v) && isObj(out[k])) out[k] = deepMerge(out[k], v);
    else out[k] = v;
  }
  return out;
}

/** The example's text with github.com and its example repository replaced by the double and `fullName`. */
function rehost(example: Json, world: World, fullName: string | undefined): Json {
  let text = JSON.stringify(example);
  const exampleRepo: string | undefined = example.repository?.full_name;
  if (exampleRepo && fullName) text = text.split(`/${exampleRepo}`).join(`/${fullName}`);
  const host = new URL(world.url).host;
  text = text
    .split("https://api.github.com")
    .join(world.apiUrl)
    .split("https://uploads.github.com")
    .join(`${world.url}/api/uploads`)
    .split("https://github.com")
    .join(world.url)
    .split("git://github.com/")
    .join(`git://${host}/`)
    .split("git@github.com:")
    .join(`git@${host.replace(/:\d+$/, "")}:`);
  return JSON.parse(text);
}

function candidates(event: string, action: string | undefined): Json[] {
  const set = loadExamples().find((e) => e.name === event);
  if (!set) throw new Error(`GitHub's examples have no ${event} event`);
  const list = set.examples.filter((e) => (action === undefined ? true : e.action === action));
  if (!list.length) throw new Error(`GitHub's examples have no ${event} with action ${action}`);
  // Prefer examples sent to an App (they carry an installation).
  return [...list.filter((e) => "installation" in e), ...list.filter((e) => !("installation" in e))];
}

function schemaKey(event: string, action: string | undefined): string {
  const base = event.replace(/_/g, "-");
  const key = action ? `${base}-${action.replace(/_/g, "-")}` : base;
  if (webhookKeys().includes(key)) return key;
  if (webhookKeys().includes(base)) return base;
  throw new Error(`GitHub's webhook description has no schema for ${event}${action ? `.${action}` : ""}`);
}

function commitJson(world: World, fullName: string, c: CommitInfo) {
  const author = { name: "Octo Double", email: "octo-double@users.noreply.example.com", username: "octo-double" };
  return {
    id: c.id,
    tree_id: c.tree_id,
    distinct: true,
    message: c.message,
    timestamp: c.timestamp,
    url: `${world.url}/${fullName}/commit/${c.id}`,
    author,
    committer: author,
    added: c.added,
    removed: c.removed,
    modified: c.modified,
  };
}

function orgJson(world: World, a: { login: string; id: number }) {
  const u = `${world.apiUrl}/orgs/${a.login}`;
  return {
    login: a.login,
    id: a.id,
    node_id: Buffer.from(`012:Organization${a.id}`).toString("base64"),
    url: u,
    repos_url: `${u}/repos`,
    events_url: `${u}/events`,
    hooks_url: `${u}/hooks`,
    issues_url: `${u}/issues`,
    members_url: `${u}/members{/member}`,
    public_members_url: `${u}/public_members{/member}`,
    avatar_url: `${world.url}/avatars/u/${a.id}`,
    description: null,
  };
}

const brief = (r: Json) => ({ id: r.id, node_id: r.node_id, name: r.name, full_name: r.full_name, private: r.private });

/** One payload from one example; throws when the state cannot fill it. */
function patch(world: World, event: string, example: Json, o: WebhookOptions): Json {
  const action = o.action ?? example.action;
  const fullName = o.repository ?? (event.startsWith("installation") ? undefined : world.firstRepository(o.installationId ?? world.firstInstallation()));
  const installationId = o.installationId ?? (fullName ? world.installationFor(fullName) : undefined) ?? world.firstInstallation();
  let p = rehost(example, world, fullName);
  if (action !== undefined) p.action = action;
  const inst = installationId !== undefined ? world.installation(installationId) : undefined;
  const repo = fullName ? world.repo(fullName) : undefined;
  const sender = inst ? inst.accountJson : world.user("octo-double");
  p.sender = overlay(p.sender, sender);
  if (inst)
    p.installation = event.startsWith("installation")
      ? overlay(p.installation, inst.json)
      : { id: inst.json.id, node_id: Buffer.from(`034:Integration::Installation${inst.json.id}`).toString("base64") };
  if (repo) {
    p.repository = overlay(p.repository ?? {}, repo.json);
    if ("master_branch" in p.repository) p.repository.master_branch = repo.defaultBranch;
    if (isObj(p.repository.owner)) {
      if ("name" in p.repository.owner) p.repository.owner.name = repo.owner.login;
      if ("email" in p.repository.owner) p.repository.owner.email = null;
    }
    if (repo.owner.type === "Organization") p.organization = overlay(p.organization ?? {}, orgJson(world, repo.owner));
    else delete p.organization;
  } else if (!event.startsWith("installation") && event !== "ping") {
    throw new Error(`a ${event} webhook needs a repository (none given and the installation sees none)`);
  } else {
    delete p.repository;
  }

  switch (event) {
    case "push": {
      const r = repo!;
      const ref = o.ref ?? `refs/heads/${r.defaultBranch}`;
      const branch = ref.replace(/^refs\/heads\//, "");
      const last = r.pushes.get(ref);
      const after = o.sha ?? last?.after ?? ZERO;
      const info = r.commits.get(after);
      // The push that moved the ref there; a deletion starts from the ref's tip; otherwise the commit's parent.
      const before = last && last.after === after ? last.before : after === ZERO ? (last?.after ?? r.branches.get(branch) ?? ZERO) : (info?.parent ?? ZERO);
      const commits = after === ZERO || !info || ref.startsWith("refs/tags/") ? [] : [commitJson(world, r.fullName, info)];
      p = {
        ...p,
        ref,
        before,
        after,
        created: before === ZERO && after !== ZERO,
        deleted: after === ZERO,
        forced: false,
        base_ref: null,
        compare: `${world.url}/${r.fullName}/compare/${before.slice(0, 12)}...${after.slice(0, 12)}`,
        commits,
        head_commit: after === ZERO || !info ? null : commitJson(world, r.fullName, info),
        pusher: { name: sender.login, email: null },
      };
      break;
    }
    case "pull_request": {
      const r = repo!;
      const number = p.number;
      const headRef = o.ref?.replace(/^refs\/heads\//, "") ?? [...r.branches.keys()].find((b) => b !== r.defaultBranch) ?? r.defaultBranch;
      const sha = o.sha ?? r.branches.get(headRef) ?? r.branches.get(r.defaultBranch)!;
      const baseSha = r.branches.get(r.defaultBranch)!;
      const side = (ref: string, s: string) => ({ label: `${r.owner.login}:${ref}`, ref, sha: s, user: p.repository.owner, repo: p.repository });
      p.pull_request = {
        ...p.pull_request,
        head: overlay(p.pull_request.head, side(headRef, sha)),
        base: overlay(p.pull_request.base, side(r.defaultBranch, baseSha)),
        user: sender,
        state: "open",
        merged: false,
        merged_at: null,
        closed_at: null,
      };
      p.number = number;
      if (action === "synchronize") {
        p.after = sha;
        p.before = r.commits.get(sha)?.parent ?? ZERO;
      }
      break;
    }
    case "installation": {
      const i = inst!;
      p.repositories = i.repositories.map(brief);
      if ("requester" in p) p.requester = null;
      break;
    }
    case "installation_repositories": {
      const i = inst!;
      const chosen = o.repository ? [brief(world.repo(o.repository).json)] : i.repositories.map(brief);
      p.repository_selection = i.selection;
      p.repositories_added = action === "added" ? chosen : [];
      p.repositories_removed = action === "removed" ? chosen : [];
      p.requester = null;
      break;
    }
    case "ping": {
      p.hook_id = world.hookId;
      p.hook = {
        ...p.hook,
        type: "App",
        id: world.hookId,
        app_id: world.appId,
        events: ["push", "pull_request"],
        config: { content_type: "json", url: `${world.url}/webhook-target`, insecure_ssl: "0" },
      };
      for (const k of ["url", "test_url", "ping_url"]) delete p.hook[k];
      p.hook.deliveries_url = `${world.apiUrl}/app/hook/deliveries`;
      break;
    }
    default:
      break;
  }
  if (o.overrides) p = deepMerge(p, o.overrides);
  return p;
}

/** The payload of `event` for the double's state, validated against GitHub's schema, and its delivery headers. */
export function buildWebhook(world: World, event: string, o: WebhookOptions = {}): { headers: Record<string, string>; body: string; payload: Json } {
  const list = candidates(event, o.action);
  const key = schemaKey(event, o.action ?? list[0]!.action);
  const validate = webhookValidator(key);
  let firstProblems: string[] | undefined;
  let payload: Json | undefined;
  for (const example of list) {
    const p = patch(world, event, example, o);
    let ok = validate(p);
    for (let i = 0; !ok && i < 3 && fixTimes(p, (validate.errors ?? []) as any); i++) ok = validate(p);
    if (ok) {
      payload = p;
      break;
    }
    firstProblems ??= formatErrors(validate.errors, "payload");
  }
  if (!payload) throw new Error(`the ${key} webhook built from GitHub's examples does not match GitHub's schema:\n${firstProblems!.slice(0, 20).join("\n")}`);
  const body = JSON.stringify(payload);
  const secret = o.secret ?? world.webhookSecret;
  const headers: Record<string, string> = {
    "content-type": "application/json",
    "user-agent": "GitHub-Hookshot/5c1d2a7",
    "x-github-event": event,
    "x-github-delivery": o.deliveryId ?? randomUUID(),
    "x-github-hook-id": String(world.hookId),
    "x-github-hook-installation-target-id": String(world.appId),
    "x-github-hook-installation-target-type": "integration",
    "x-hub-signature": `sha1=${createHmac("sha1", secret).update(body).digest("hex")}`,
    "x-hub-signature-256": `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`,
  };
  return { headers, body, payload };
}
