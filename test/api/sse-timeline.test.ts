import { randomUUID } from "node:crypto";
import { EventSource } from "eventsource";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RUN_TABLE } from "../../src/db/workload-tables.ts";
import { RUN_ROWS } from "../../src/domain/runs/run-rows.ts";
import { logArchiveRows } from "../../src/domain/workloads/log-archive-rows.ts";
import { workloadRows } from "../../src/domain/workloads/workload-rows.ts";
import type { RunSpec, RunStatus, RunTimelineMarks } from "../../src/resources/run.ts";
import { trueRunSpec } from "../helpers/seed.ts";
import { startTestService, type Tenant, type TestService } from "../helpers/service.ts";
import { until } from "../helpers/until.ts";

// The run log stream's `timeline` events (issue 28) on the real service over
// its Postgres: the controller's part played here as it happens on a cluster
// (the run mirrored through the real mirror with its timeline marks, start and
// end, the environment's cache recorded, output archived by the real archive
// rows, which set first_output_at), and real EventSource clients that must be
// given, on connect and as it grows, the very timeline GET /v1/runs/{id} shows.

interface TimelineEvent {
  event: string;
  at: string;
  cache?: string;
}
type Got = { type: "timeline"; timeline: TimelineEvent[] } | { type: "status"; status: string } | { type: "stdout" } | { type: "end"; status: string };

let svc: TestService;
let alice: Tenant;
let repositoryId: string;

beforeAll(async () => {
  svc = await startTestService();
  alice = await svc.tenant();
  repositoryId = randomUUID();
  const now = new Date();
  await svc.db
    .insertInto("repositories")
    .values({
      id: repositoryId,
      account_id: alice.accountId,
      name: "r",
      url: "https://example.invalid/r.git",
      provider: "git",
      default_branch: "main",
      created_at: now,
      updated_at: now,
    })
    .execute();
}, 60_000);

afterAll(async () => {
  await svc?.close();
});

/** A client of the run's stream that records its timeline, status, line and end events in order. */
function client(runId: string) {
  const events: Got[] = [];
  let resolveEnd!: () => void;
  const ended = new Promise<void>((r) => (resolveEnd = r));
  const es = new EventSource(`${svc.url}/v1/runs/${runId}/logs/stream`, {
    fetch: (u, init) => fetch(u, { ...init, headers: { ...init.headers, authorization: `Bearer ${alice.key}` } }),
  });
  es.addEventListener("timeline", (e: MessageEvent) => {
    // A full snapshot, not a resume position: it carries no id of its own.
    events.push({ type: "timeline", timeline: (JSON.parse(e.data as string) as { timeline: TimelineEvent[] }).timeline });
  });
  es.addEventListener("status", (e: MessageEvent) => events.push({ type: "status", status: (JSON.parse(e.data as string) as { status: string }).status }));
  es.addEventListener("stdout", () => events.push({ type: "stdout" }));
  es.addEventListener("end", (e: MessageEvent) => {
    events.push({ type: "end", status: (JSON.parse(e.data as string) as { status: string }).status });
    es.close();
    resolveEnd();
  });
  return {
    es,
    events,
    ended,
    get timelines() {
      return events.flatMap((e) => (e.type === "timeline" ? [e.timeline] : []));
    },
  };
}

async function getTimeline(runId: string): Promise<TimelineEvent[]> {
  const res = await alice.api(`/v1/runs/${runId}`);
  expect(res.status).toBe(200);
  return ((await res.json()) as { timeline: TimelineEvent[] }).timeline;
}

/** Waits until the client's newest snapshot has `count` events, and checks it is GET /v1/runs/{id}'s timeline. */
async function expectSnapshot(c: ReturnType<typeof client>, runId: string, names: string[]) {
  const got = await until(`a timeline event ending with ${names.at(-1)}`, 20_000, () => {
    const last = c.timelines.at(-1);
    return last && last.length === names.length ? last : null;
  });
  expect(got.map((e) => e.event)).toEqual(names);
  expect(got).toEqual(await getTimeline(runId));
}

describe("the run log stream's timeline events", () => {
  it("sends the run's timeline on connect and each time it grows, equal to GET /v1/runs/{id}'s, the last one before end", async () => {
    const runId = randomUUID();
    const rows = workloadRows<RunSpec, RunStatus>(svc.db, RUN_ROWS);
    const archive = logArchiveRows(svc.db, RUN_TABLE);
    const key = "e".repeat(64);
    const spec = trueRunSpec(runId, alice.accountId, repositoryId);
    const created = new Date(Date.now() - 60_000);
    const at = (s: number) => new Date(created.getTime() + s * 1000).toISOString();
    const mirror = (status: RunStatus | undefined) => rows.mirror({ namespace: "codeplane", name: `run-${runId}`, createdAt: created, spec, status });
    const marks: RunTimelineMarks = {};

    await mirror(undefined);
    const early = client(runId);
    // On connect: the timeline so far (created), after the status replayed then.
    await expectSnapshot(early, runId, ["created"]);
    expect(early.events.slice(0, 2).map((e) => e.type)).toEqual(["status", "timeline"]);

    // The Job is made (its environment to be restored from the cache, which the API records), admitted and scheduled.
    await svc.db
      .updateTable("runs")
      .set({ environment: JSON.stringify({ key, image: "codeplane-runner:dev", cache: "hit", warnings: [] }) })
      .where("id", "=", runId)
      .execute();
    Object.assign(marks, { admitted: at(1), scheduled: at(2) });
    await mirror({ phase: "preprocessing", timeline: { ...marks } });
    await expectSnapshot(early, runId, ["created", "admitted", "scheduled"]);

    Object.assign(marks, { imageReady: at(5), checkedOut: at(7), environmentReady: at(9) });
    await mirror({ phase: "preprocessing", timeline: { ...marks } });
    await expectSnapshot(early, runId, ["created", "admitted", "scheduled", "image_ready", "checked_out", "environment_ready"]);
    expect(early.timelines.at(-1)!.find((e) => e.event === "environment_ready")?.cache).toBe("hit");

    // A client that comes now (or reconnects) is given the current snapshot at once.
    const middle = client(runId);
    await expectSnapshot(middle, runId, ["created", "admitted", "scheduled", "image_ready", "checked_out", "environment_ready"]);
    expect(middle.timelines).toHaveLength(1);

    await mirror({ phase: "running", startTime: at(10), timeline: { ...marks } });
    await expectSnapshot(early, runId, ["created", "admitted", "scheduled", "image_ready", "checked_out", "environment_ready", "started"]);

    // The archiver stores the first lines: first_output_at.
    await archive.write(
      runId,
      [1, 2, 3].map((seq) => ({ seq, stream: "stdout" as const, ts: at(10 + seq / 10), line: `line ${seq}` })),
      { stdout: 21, stderr: 0 },
      { stdout: false, stderr: false },
    );
    await expectSnapshot(early, runId, ["created", "admitted", "scheduled", "image_ready", "checked_out", "environment_ready", "started", "first_output"]);

    // It ends: the controller mirrors its end, then marks its logs complete.
    await mirror({ phase: "completed", startTime: at(10), completionTime: at(12), exitCode: 0, timeline: { ...marks } });
    await rows.markLogsComplete(runId);
    await Promise.all([early.ended, middle.ended]);
    const all = ["created", "admitted", "scheduled", "image_ready", "checked_out", "environment_ready", "started", "first_output", "ended"];
    const final = await getTimeline(runId);
    expect(final.map((e) => e.event)).toEqual(all);

    for (const [who, c] of [
      ["subscribed from the start", early],
      ["subscribed mid-run", middle],
    ] as const) {
      // Every snapshot is GET's timeline of its moment: each has more events than the one before, and keeps them.
      for (const [i, t] of c.timelines.entries()) {
        expect(final.slice(0, t.length), `${who}: snapshot ${i}`).toEqual(t);
        if (i > 0) expect(t.length, `${who}: snapshot ${i} grew`).toBeGreaterThan(c.timelines[i - 1]!.length);
      }
      // The last one, with `ended`, before the terminal status and end; nothing after end.
      expect(c.timelines.at(-1), who).toEqual(final);
      const lastTimeline = c.events.findLastIndex((e) => e.type === "timeline");
      expect(
        c.events.slice(lastTimeline + 1).map((e) => e.type),
        who,
      ).not.toContain("timeline");
      expect(c.events.slice(-2), who).toEqual([
        { type: "status", status: "completed" },
        { type: "end", status: "completed" },
      ]);
      expect(
        c.events.filter((e) => e.type === "stdout"),
        who,
      ).toHaveLength(3);
    }
    expect(early.timelines.length).toBeGreaterThanOrEqual(6);

    // A client after the end: the whole timeline, the stored lines, the terminal status, end.
    const late = client(runId);
    await late.ended;
    expect(late.timelines).toEqual([final]);
    expect(late.events.flatMap((e) => (e.type === "status" ? [e.status] : []))).toEqual(["pending", "preprocessing", "running", "completed"]);
    expect(late.events.slice(-5).map((e) => e.type)).toEqual(["stdout", "stdout", "stdout", "status", "end"]);
  }, 120_000);
});
