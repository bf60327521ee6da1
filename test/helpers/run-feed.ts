// What the run feed's tests (test/db/run-feed-*.test.ts) share: a sink that
// records what a stream was sent, and a run mirrored the way the controller
// mirrors one, so the tests write runs through the same rows module as the
// service does and the feed sees its own triggers fire.
import { randomUUID } from "node:crypto";
import type { Kysely } from "kysely";
import type { Database } from "../../src/db/schema.ts";
import type { RunFeedEvent, RunFeedSink } from "../../src/domain/runs/run-feed.ts";
import { RUN_ROWS } from "../../src/domain/runs/run-rows.ts";
import { workloadRows } from "../../src/domain/workloads/workload-rows.ts";
import type { RunSpec, RunStatus } from "../../src/resources/run.ts";
import { trueRunSpec } from "./seed.ts";

/** A stream's sink that keeps its events and positions; a `reset` fails the test. */
export function feedSink() {
  const got: { events: RunFeedEvent[]; positions: string[] } = { events: [], positions: [] };
  const s: RunFeedSink = {
    events: (events, position) => {
      got.events.push(...events);
      got.positions.push(position);
    },
    ready: (position) => void got.positions.push(position),
    reset: () => {
      throw new Error("no reset expected");
    },
    close: () => {},
  };
  /** The statuses the stream was sent for one run, in order. */
  const status = (runId: string) => got.events.flatMap((e) => (e.kind === "run" && e.run.run_id === runId ? [e.run.status] : []));
  return { s, got, positions: got.positions, status };
}

/** A new run of the account's repository; `mirror` writes it (and a status) as the controller's mirror does. */
export function feedRun(db: Kysely<Database>, accountId: string, repositoryId: string) {
  const rows = workloadRows<RunSpec, RunStatus>(db, RUN_ROWS);
  const runId = randomUUID();
  const spec = trueRunSpec(runId, accountId, repositoryId);
  return { runId, mirror: (status?: RunStatus) => rows.mirror({ namespace: "codeplane", name: `run-${runId}`, createdAt: new Date(), spec, status }) };
}
