// A retried run's next attempt in Postgres (src/domain/runs/run-attempts.ts): the marker line
// goes into the log once, at the start of the attempt's range; the lost attempt's metrics are
// dropped, and frames of it that arrive late are not counted; its outputs go through the given
// discard; and the run's row shows the attempts mirrored from the Run's status.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LogLine } from "@codeplane/frames";
import { RUN_TABLE } from "../../src/db/workload-tables.ts";
import { beginRunAttempt, discardOutputRows } from "../../src/domain/runs/run-attempts.ts";
import { readRunMetrics, runMetricsArchiveHook } from "../../src/domain/runs/run-metrics.ts";
import { findRun, RUN_ROWS, toRun } from "../../src/domain/runs/run-rows.ts";
import { logArchiveRows } from "../../src/domain/workloads/log-archive-rows.ts";
import { mirrorWorkload } from "../../src/domain/workloads/workload-rows.ts";
import { ATTEMPT_SEQ_STRIDE, type RunSpec, type RunStatus } from "../../src/resources/run.ts";
import { insertRunRow, seedAccountWithRepository } from "../helpers/seed.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/service.ts";

let database: TestDatabase;
let accountId: string;
let repositoryId: string;

beforeAll(async () => {
  database = await createTestDatabase();
  ({ accountId, repositoryId } = await seedAccountWithRepository(database.db));
});
afterAll(async () => {
  await database?.drop();
});

const LIMITS = { maxSeries: 100, maxPointsPerSeries: 10_000, maxNameLength: 128 };
const ts = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s % 60)).toISOString();
const out = (seq: number, line: string, stream: "stdout" | "stderr" = "stdout"): LogLine => ({ seq, stream, ts: ts(seq), line });
const marker: LogLine = { seq: ATTEMPT_SEQ_STRIDE, stream: "stderr", ts: ts(30), line: "[codeplane] attempt 2 of 2 started: attempt 1 failed (PodLost): gone" };

async function archive(runId: string, lines: LogLine[]) {
  const rows = logArchiveRows(database.db, RUN_TABLE, runMetricsArchiveHook(LIMITS));
  const resume = await rows.resume(runId);
  const bytes = { ...resume!.bytes };
  for (const l of lines) bytes[l.stream] += Buffer.byteLength(l.line) + 1;
  await rows.write(runId, lines, bytes, { stdout: false, stderr: false }, { lines, metrics: [] });
}

const storedLines = async (runId: string) =>
  (await database.db.selectFrom("run_log_lines").select(["seq", "stream", "line"]).where("run_id", "=", runId).orderBy("seq").execute()).map((r) => [
    Number(r.seq),
    r.stream,
    r.line,
  ]);

describe("beginning a run's next attempt", () => {
  it("stores the marker once, drops the lost attempt's metrics and outputs, and counts the next attempt's only", async () => {
    const runId = await insertRunRow(database.db, { accountId, repositoryId, status: "running" });
    await archive(runId, [out(1, "begin"), out(2, "::metric name=loss::0.9"), out(3, "warming up", "stderr")]);
    expect((await readRunMetrics(database.db, accountId, runId)).final).toEqual({ loss: 0.9 });
    await database.db
      .insertInto("run_outputs")
      .values({ run_id: runId, account_id: accountId, path: "partial.csv", object_key: null, size: 3, sha256: "x", content_type: "text/csv", refused: null })
      .execute();
    const discarded: string[] = [];
    const deps = {
      discardOutputs: async (db: typeof database.db, id: string) => {
        discarded.push(id);
        await discardOutputRows(db, id);
      },
    };

    await beginRunAttempt(database.db, deps, runId, marker);
    // A restart may do it again: nothing changes the second time.
    await beginRunAttempt(database.db, deps, runId, { ...marker, ts: ts(40), line: "another text" });

    expect(discarded).toEqual([runId, runId]);
    expect(await database.db.selectFrom("run_outputs").select("path").where("run_id", "=", runId).execute()).toEqual([]);
    expect(await readRunMetrics(database.db, accountId, runId)).toEqual({ series: [], final: {}, dropped: 0 });
    const row = await database.db.selectFrom("runs").select(["stderr_bytes", "metrics_seq"]).where("id", "=", runId).executeTakeFirstOrThrow();
    expect(Number(row.stderr_bytes)).toBe(Buffer.byteLength("warming up") + 1 + Buffer.byteLength(marker.line) + 1);
    expect(Number(row.metrics_seq)).toBe(ATTEMPT_SEQ_STRIDE);

    // A late frame of the lost attempt is kept as a line but not counted; the next attempt's are.
    await archive(runId, [out(4, "::metric name=loss::0.1"), out(ATTEMPT_SEQ_STRIDE + 1, "begin"), out(ATTEMPT_SEQ_STRIDE + 2, "::metric name=loss::0.4")]);
    expect((await readRunMetrics(database.db, accountId, runId)).final).toEqual({ loss: 0.4 });
    expect(await storedLines(runId)).toEqual([
      [1, "stdout", "begin"],
      [2, "stdout", "::metric name=loss::0.9"],
      [3, "stderr", "warming up"],
      [4, "stdout", "::metric name=loss::0.1"],
      [ATTEMPT_SEQ_STRIDE, "stderr", marker.line],
      [ATTEMPT_SEQ_STRIDE + 1, "stdout", "begin"],
      [ATTEMPT_SEQ_STRIDE + 2, "stdout", "::metric name=loss::0.4"],
    ]);
  });

  it("shows the Run's attempts and its retries on the run, mirrored from the resource", async () => {
    const runId = "0190b1c2-3d4e-7f00-8a1b-00000000a777";
    const spec: RunSpec = {
      runId,
      accountId,
      repositoryId,
      repositoryUrl: "https://example.com/r.git",
      commitHash: "a".repeat(40),
      command: ["true"],
      computeType: "cpu-general",
      timeoutSeconds: 60,
      retries: 2,
    };
    const mirror = (status: RunStatus | undefined) =>
      mirrorWorkload(database.db, RUN_ROWS, { namespace: "codeplane", name: `run-${runId}`, createdAt: new Date(ts(0)), spec, status });
    await mirror(undefined);
    let run = toRun((await findRun(database.db, accountId, runId))!);
    expect(run.run_config.retries).toBe(2);
    expect(run.attempts).toEqual([]);
    await mirror({
      phase: "running",
      startTime: ts(5),
      attempts: [
        {
          attempt: 1,
          jobName: `run-${runId}`,
          createdAt: ts(1),
          startTime: ts(5),
          completionTime: ts(20),
          reason: "PodLost",
          message: "gone",
          logSeqOffset: 0,
        },
        { attempt: 2, jobName: `run-${runId}-attempt-2`, createdAt: ts(20), logSeqOffset: ATTEMPT_SEQ_STRIDE },
      ],
    });
    run = toRun((await findRun(database.db, accountId, runId))!);
    expect(run.attempts).toEqual([
      { attempt: 1, job_name: `run-${runId}`, created_at: ts(1), started_at: ts(5), ended_at: ts(20), reason: "PodLost", error: "gone", first_seq: 1 },
      {
        attempt: 2,
        job_name: `run-${runId}-attempt-2`,
        created_at: ts(20),
        started_at: null,
        ended_at: null,
        reason: null,
        error: null,
        first_seq: ATTEMPT_SEQ_STRIDE,
      },
    ]);
    // A status without attempts (an older controller's) leaves them.
    await mirror({ phase: "running", startTime: ts(5) });
    expect(toRun((await findRun(database.db, accountId, runId))!).attempts).toHaveLength(2);
  });
});
