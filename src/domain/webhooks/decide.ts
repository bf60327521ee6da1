// What a GitHub webhook delivery asks codeplane to do, decided from its event
// name and payload alone (no I/O), so every event/action rule is a table test.
// Payloads are read defensively: a field GitHub did not send is a skip with a
// reason, never a crash (a delivery that throws would be retried for nothing).

export type Trigger = "push" | "pull_request";

export interface RepositoryRef {
  /** GitHub's numeric repository id (stable across renames). */
  id: number | null;
  fullName: string;
}

export type DeliveryAction =
  | { kind: "skip"; reason: string }
  | { kind: "ping" }
  | { kind: "analyze"; trigger: Trigger; installationId: number; repository: RepositoryRef; sha: string; branch: string | null; pullRequest: number | null }
  | {
      kind: "installation";
      action: "created" | "deleted" | "suspend" | "unsuspend";
      installationId: number;
      accountLogin: string | null;
      accountType: string | null;
      repositorySelection: string | null;
    }
  | { kind: "installation_repositories"; installationId: number; added: RepositoryRef[]; removed: RepositoryRef[]; repositorySelection: string | null };

const ZERO_SHA = /^0{40}$/;
const SHA = /^[0-9a-f]{40}$/;
const PULL_REQUEST_ACTIONS = new Set(["opened", "synchronize", "reopened"]);
const INSTALLATION_ACTIONS = new Set(["created", "deleted", "suspend", "unsuspend"]);

type Json = Record<string, unknown>;
const obj = (v: unknown): Json | null => (v && typeof v === "object" && !Array.isArray(v) ? (v as Json) : null);
const str = (v: unknown): string | null => (typeof v === "string" ? v : null);
const num = (v: unknown): number | null => (typeof v === "number" && Number.isSafeInteger(v) ? v : null);

function repositoryOf(v: unknown): RepositoryRef | null {
  const r = obj(v);
  const fullName = str(r?.full_name);
  return fullName ? { id: num(r?.id), fullName } : null;
}

function repositoriesOf(v: unknown): RepositoryRef[] {
  return Array.isArray(v) ? v.map(repositoryOf).filter((r): r is RepositoryRef => r !== null) : [];
}

/** What one event's payload asks for: the payload, its action and its installation's id, read once. */
type EventRule = (p: Json, action: string | null, installationId: number | null) => DeliveryAction;

function push(p: Json, _action: string | null, installationId: number | null): DeliveryAction {
  const ref = str(p.ref) ?? "";
  const after = str(p.after) ?? "";
  if (p.deleted === true || ZERO_SHA.test(after)) return { kind: "skip", reason: `branch deletion (${ref || "no ref"})` };
  if (ref.startsWith("refs/tags/")) return { kind: "skip", reason: `tag push (${ref.slice("refs/tags/".length)})` };
  if (!ref.startsWith("refs/heads/")) return { kind: "skip", reason: `not a branch push (${ref || "no ref"})` };
  return analyze("push", p, installationId, after, ref.slice("refs/heads/".length), null);
}

function pullRequest(p: Json, action: string | null, installationId: number | null): DeliveryAction {
  if (!action || !PULL_REQUEST_ACTIONS.has(action)) return { kind: "skip", reason: `pull_request action ${action ?? "(none)"} does not start an analysis` };
  const pr = obj(p.pull_request);
  const head = obj(pr?.head);
  // The repository the App is installed on is the base's; a fork's head commit is fetched through it (refs/pull/N/head).
  return analyze("pull_request", p, installationId, str(head?.sha) ?? "", str(head?.ref), num(p.number) ?? num(pr?.number));
}

function installation(p: Json, action: string | null, installationId: number | null): DeliveryAction {
  if (!action || !INSTALLATION_ACTIONS.has(action)) return { kind: "skip", reason: `installation action ${action ?? "(none)"} changes nothing here` };
  if (installationId === null) return { kind: "skip", reason: "installation event without an installation id" };
  const inst = obj(p.installation);
  const account = obj(inst?.account);
  return {
    kind: "installation",
    action: action as "created" | "deleted" | "suspend" | "unsuspend",
    installationId,
    accountLogin: str(account?.login),
    accountType: str(account?.type),
    repositorySelection: str(inst?.repository_selection),
  };
}

function installationRepositories(p: Json, action: string | null, installationId: number | null): DeliveryAction {
  if (action !== "added" && action !== "removed")
    return { kind: "skip", reason: `installation_repositories action ${action ?? "(none)"} changes nothing here` };
  if (installationId === null) return { kind: "skip", reason: "installation_repositories event without an installation id" };
  return {
    kind: "installation_repositories",
    installationId,
    added: repositoriesOf(p.repositories_added),
    removed: repositoriesOf(p.repositories_removed),
    repositorySelection: str(p.repository_selection),
  };
}

/** The events codeplane handles, each by its own rule. */
const EVENTS: Record<string, EventRule> = {
  ping: () => ({ kind: "ping" }),
  push,
  pull_request: pullRequest,
  installation,
  installation_repositories: installationRepositories,
};

export function decideDelivery(event: string, payload: unknown): DeliveryAction {
  const p = obj(payload);
  if (!p) return { kind: "skip", reason: "the payload is not a JSON object" };
  // Own keys only: "constructor" or "toString" is not an event codeplane handles.
  const rule = Object.hasOwn(EVENTS, event) ? EVENTS[event] : undefined;
  if (!rule) return { kind: "skip", reason: `event ${event} is not one codeplane handles` };
  return rule(p, str(p.action), num(obj(p.installation)?.id));
}

function analyze(trigger: Trigger, p: Json, installationId: number | null, sha: string, branch: string | null, pullRequest: number | null): DeliveryAction {
  if (installationId === null) return { kind: "skip", reason: `${trigger} without an installation (not sent to a GitHub App)` };
  const repository = repositoryOf(p.repository);
  if (!repository) return { kind: "skip", reason: `${trigger} without a repository` };
  if (!SHA.test(sha)) return { kind: "skip", reason: `${trigger} without a head commit` };
  return { kind: "analyze", trigger, installationId, repository, sha, branch, pullRequest };
}
