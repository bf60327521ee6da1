import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import { decideDelivery, type DeliveryAction } from "./decide.ts";

// GitHub's own example payloads (@octokit/webhooks-examples), so the rules are
// tested against the shapes GitHub sends, not against shapes written here.
const examples: { name: string; examples: Record<string, unknown>[] }[] = createRequire(import.meta.url)(
  "@octokit/webhooks-examples/api.github.com/index.json",
);

function example(event: string, match: (p: Record<string, unknown>) => boolean): Record<string, unknown> {
  const found = examples.find((e) => e.name === event)?.examples.find(match);
  if (!found) throw new Error(`no ${event} example matches`);
  return structuredClone(found);
}

const withInstallation = (p: Record<string, unknown>, id = 42) => ({ ...p, installation: { id, node_id: "x" } });
const SHA = "a".repeat(40);

describe("decideDelivery", () => {
  const branchPush = example("push", (p) => p.ref === "refs/heads/master" && p.deleted === false && !!p.installation);
  const prSynchronize = example("pull_request", (p) => p.action === "synchronize");
  const cases: { name: string; event: string; payload: unknown; expected: Partial<DeliveryAction> }[] = [
    {
      name: "a branch push analyses its after commit on that branch",
      event: "push",
      payload: branchPush,
      expected: { kind: "analyze", trigger: "push", sha: branchPush.after as string, branch: "master" },
    },
    {
      name: "a branch deletion is skipped",
      event: "push",
      payload: { ...branchPush, deleted: true, after: "0".repeat(40) },
      expected: { kind: "skip", reason: "branch deletion (refs/heads/master)" },
    },
    {
      name: "an all-zero after is a deletion even without deleted",
      event: "push",
      payload: { ...branchPush, after: "0".repeat(40) },
      expected: { kind: "skip" },
    },
    {
      name: "a tag push is skipped",
      event: "push",
      payload: withInstallation(example("push", (p) => p.ref === "refs/tags/simple-tag" && p.deleted === false)),
      expected: { kind: "skip", reason: "tag push (simple-tag)" },
    },
    { name: "a push to another kind of ref is skipped", event: "push", payload: { ...branchPush, ref: "refs/notes/commits" }, expected: { kind: "skip" } },
    {
      name: "a push without an installation is skipped (a repository webhook, not the App's)",
      event: "push",
      payload: { ...branchPush, installation: undefined },
      expected: { kind: "skip" },
    },
    {
      name: "a push without a valid head commit is skipped",
      event: "push",
      payload: { ...branchPush, after: "not-a-sha" },
      expected: { kind: "skip", reason: "push without a head commit" },
    },
    {
      name: "pull_request synchronize analyses the head commit of the base repository",
      event: "pull_request",
      payload: prSynchronize,
      expected: {
        kind: "analyze",
        trigger: "pull_request",
        sha: (prSynchronize.pull_request as { head: { sha: string } }).head.sha,
        pullRequest: prSynchronize.number as number,
      },
    },
    {
      name: "pull_request opened analyses",
      event: "pull_request",
      payload: example("pull_request", (p) => p.action === "opened" && !!p.installation),
      expected: { kind: "analyze" },
    },
    {
      name: "pull_request reopened analyses",
      event: "pull_request",
      payload: example("pull_request", (p) => p.action === "reopened"),
      expected: { kind: "analyze" },
    },
    {
      name: "pull_request closed is skipped",
      event: "pull_request",
      payload: example("pull_request", (p) => p.action === "closed"),
      expected: { kind: "skip", reason: "pull_request action closed does not start an analysis" },
    },
    {
      name: "pull_request labeled is skipped",
      event: "pull_request",
      payload: example("pull_request", (p) => p.action === "labeled"),
      expected: { kind: "skip" },
    },
    {
      name: "installation created",
      event: "installation",
      payload: example("installation", (p) => p.action === "created"),
      expected: { kind: "installation", action: "created", installationId: 957387 },
    },
    {
      name: "installation deleted",
      event: "installation",
      payload: example("installation", (p) => p.action === "deleted"),
      expected: { kind: "installation", action: "deleted", installationId: 2 },
    },
    {
      name: "installation suspend",
      event: "installation",
      payload: example("installation", (p) => p.action === "suspend"),
      expected: { kind: "installation", action: "suspend" },
    },
    {
      name: "installation unsuspend",
      event: "installation",
      payload: example("installation", (p) => p.action === "unsuspend"),
      expected: { kind: "installation", action: "unsuspend" },
    },
    {
      name: "installation new_permissions_accepted changes nothing",
      event: "installation",
      payload: example("installation", (p) => p.action === "new_permissions_accepted"),
      expected: { kind: "skip" },
    },
    {
      name: "repositories added",
      event: "installation_repositories",
      payload: example("installation_repositories", (p) => p.action === "added"),
      expected: { kind: "installation_repositories", removed: [] },
    },
    {
      name: "repositories removed",
      event: "installation_repositories",
      payload: example("installation_repositories", (p) => p.action === "removed"),
      expected: { kind: "installation_repositories", added: [] },
    },
    { name: "ping", event: "ping", payload: example("ping", () => true), expected: { kind: "ping" } },
    {
      name: "an event codeplane does not handle",
      event: "star",
      payload: { action: "created" },
      expected: { kind: "skip", reason: "event star is not one codeplane handles" },
    },
    { name: "a payload that is not an object", event: "push", payload: [1, 2], expected: { kind: "skip", reason: "the payload is not a JSON object" } },
    {
      name: "a repository without a full name",
      event: "push",
      payload: { ...branchPush, repository: { id: 1 } },
      expected: { kind: "skip", reason: "push without a repository" },
    },
    {
      name: "a minimal hand-made push",
      event: "push",
      payload: { ref: "refs/heads/feature/x", after: SHA, repository: { id: 7, full_name: "o/r" }, installation: { id: 3 } },
      expected: { kind: "analyze", branch: "feature/x", repository: { id: 7, fullName: "o/r" }, installationId: 3 },
    },
  ];
  it.each(cases)("$name", ({ event, payload, expected }) => {
    expect(decideDelivery(event, payload)).toMatchObject(expected);
  });

  it("lists the repositories added and removed by id and full name", () => {
    const added = decideDelivery(
      "installation_repositories",
      example("installation_repositories", (p) => p.action === "added"),
    );
    expect(added.kind === "installation_repositories" && added.added.length).toBeGreaterThan(0);
    if (added.kind === "installation_repositories") for (const r of added.added) expect(r.fullName).toMatch(/^[^/]+\/[^/]+$/);
  });
});
