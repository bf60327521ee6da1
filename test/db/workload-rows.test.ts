import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ANALYSIS_ROWS, saveAnalysisResult } from "../../src/domain/analyses/analysis-rows.ts";
import { RUN_ROWS } from "../../src/domain/runs/run-rows.ts";
import { Unreconcilable } from "../../src/domain/workloads/unreconcilable.ts";
import { checkoutGrantFor, mintCheckoutToken } from "../../src/domain/checkout/checkout-tokens.ts";
import { hideWorkload, removeDetachedWorkload, workloadRows, type WorkloadRowKind } from "../../src/domain/workloads/workload-rows.ts";
import { logArchiveRows } from "../../src/domain/workloads/log-archive-rows.ts";
import type { AnalysisSpec, AnalysisStatus } from "../../src/resources/analysis.ts";
import type { WorkloadSpec, WorkloadStatus } from "../../src/resources/common.ts";
import type { RunSpec, RunStatus } from "../../src/resources/run.ts";
import { untyped } from "../../src/db/workload-tables.ts";
import { seedAccountWithRepository } from "../helpers/seed.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/service.ts";

// The one Postgres mirror of workload resources, against a real server, for
// both kinds: ordered by rank, final once terminal, untouched once hidden, and
// "orphaned" (not an error) when its repository is gone.

let database: TestDatabase;
let accountId: string;
let repositoryId: string;

beforeAll(async () => {
  database = await createTestDatabase();
  ({ accountId, repositoryId } = await seedAccountWithRepository(database.db));
});
afterAll(() => database?.drop());

const COMMIT = "a".repeat(40);
const T0 = "2026-01-01T00:00:00.000Z";
const T1 = "2026-01-01T00:01:00.000Z";

interface KindUnderTest {
  name: string;
  rows: WorkloadRowKind<WorkloadSpec>;
  table: "runs" | "analyses";
  start: "start_time" | "started_at";
  end: "close_time" | "completed_at";
  spec(id: string, repo?: string): WorkloadSpec;
}

const kinds: KindUnderTest[] = [
  {
    name: "runs",
    rows: RUN_ROWS,
    table: "runs",
    start: "start_time",
    end: "close_time",
    spec: (id, repo = repositoryId): RunSpec => ({
      runId: id,
      accountId,
      repositoryId: repo,
      repositoryUrl: "https://example.invalid/r",
      commitHash: COMMIT,
      command: ["true"],
      computeType: "cpu-general",
      timeoutSeconds: 60,
    }),
  },
  {
    name: "analyses",
    rows: ANALYSIS_ROWS,
    table: "analyses",
    start: "started_at",
    end: "completed_at",
    // One live analysis per repository and commit: each test's gets its own commit.
    spec: (id, repo = repositoryId): AnalysisSpec => ({
      analysisId: id,
      accountId,
      repositoryId: repo,
      repositoryUrl: "https://example.invalid/r",
      commitHash: id.replaceAll("-", "").padEnd(40, "0").slice(0, 40),
      language: "en",
      timeoutSeconds: 60,
    }),
  },
];

describe.each(kinds)("the workload mirror: $name", (k) => {
  const rows = () => workloadRows<WorkloadSpec, WorkloadStatus>(database.db, k.rows);
  const mirror = (id: string, status: (RunStatus | AnalysisStatus) | undefined, repo?: string) =>
    rows().mirror({ namespace: "ns", name: `x-${id}`, createdAt: new Date(T0), spec: k.spec(id, repo), status });
  const read = (id: string) => database.db.selectFrom(k.table).selectAll().where("id", "=", id).executeTakeFirstOrThrow() as Promise<Record<string, unknown>>;

  it("inserts a missing row as pending, then moves it forward only", async () => {
    const id = randomUUID();
    expect(await mirror(id, undefined)).toBe("mirrored");
    expect(await read(id)).toMatchObject({ status: "pending", status_rank: 0, workflow_id: `ns/x-${id}`, account_id: accountId });
    await mirror(id, { phase: "running", startTime: T0 });
    await mirror(id, { phase: "pending" });
    expect(await read(id)).toMatchObject({ status: "running", [k.start]: new Date(T0) });
    await mirror(id, { phase: "failed", exitCode: 3, error: "command exited with code 3", completionTime: T1 });
    expect(await read(id)).toMatchObject({
      status: "failed",
      exit_code: 3,
      error: "command exited with code 3",
      [k.start]: new Date(T0),
      [k.end]: new Date(T1),
    });
  });

  const transitions = async (id: string) =>
    (
      await untyped(database.db)
        .selectFrom(k.rows.table.transitionsTable)
        .select(["seq", "phase", "at", "inferred"])
        .where(k.rows.table.key, "=", id)
        .orderBy("seq")
        .execute()
    ).map((r: { seq: number; phase: string; at: Date; inferred: boolean }) => `${r.seq} ${r.phase}${r.inferred ? "?" : ""} ${r.at.toISOString()}`);

  it("records every phase the workload went through, once and in order, with the status", async () => {
    const live = k.table === "runs" ? ["pending", "preprocessing", "running"] : ["pending", "running"];
    const seen = randomUUID();
    await mirror(seen, undefined);
    await mirror(seen, { phase: "pending" });
    // Found finished with its main container started: it was running, though nobody saw it.
    await mirror(seen, { phase: "completed", exitCode: 0, startTime: T0, completionTime: T1 });
    await mirror(seen, { phase: "completed", exitCode: 0, startTime: T0, completionTime: T1 });
    const got = await transitions(seen);
    expect(got.map((t) => t.split(" ")[1])).toEqual([...live.map((p, i) => (i === 0 ? p : `${p}?`)), "completed"]);
    expect(got.at(-2)).toBe(`${live.length} ${live.at(-1)}? ${T0}`);
    expect(got.at(-1)).toBe(`${live.length + 1} completed ${T1}`);

    // Its resource deleted by hand before it finished: cancelled, and recorded so.
    const gone = randomUUID();
    await mirror(gone, undefined);
    await rows().resourceGone(gone, `ns/x-${gone}`);
    expect((await transitions(gone)).map((t) => t.split(" ")[1])).toEqual(["pending", "cancelled"]);
  });

  it("never replaces one terminal status with another, nor moves a terminal row back", async () => {
    const id = randomUUID();
    await mirror(id, { phase: "completed", exitCode: 0, startTime: T0, completionTime: T1 });
    await mirror(id, { phase: "cancelled", error: "cancelled by request" });
    await mirror(id, { phase: "running" });
    expect(await read(id)).toMatchObject({ status: "completed", exit_code: 0, error: null });
  });

  it("leaves a hidden (deleted through the API) row alone, and removes it once its resource is gone", async () => {
    const id = randomUUID();
    await mirror(id, { phase: "running" });
    const token = await mintCheckoutToken(database.db, {
      workloadKind: k.table === "runs" ? "run" : "analysis",
      workloadId: id,
      accountId,
      repositoryId,
      commitHash: "c".repeat(40),
      expiresAt: new Date(Date.now() + 60_000),
    });
    await hideWorkload(database.db, k.rows.table, accountId, id);
    expect(await rows().isHidden(id)).toBe(true);
    expect(await checkoutGrantFor(database.db, token)).toBeNull(); // a deleted workload's checkout token is revoked at once
    await mirror(id, { phase: "completed", exitCode: 0 });
    expect(await read(id)).toMatchObject({ status: "running" });
    await rows().resourceGone(id, `other/x-${id}`);
    expect(await rows().isHidden(id)).toBe(true);
    await rows().resourceGone(id, `ns/x-${id}`);
    expect(await database.db.selectFrom(k.table).select("id").where("id", "=", id).executeTakeFirst()).toBeUndefined();
  });

  it("keeps a row whose resource left the cluster another way (kubectl delete, retention): a live one is cancelled, a finished one unchanged", async () => {
    const live = randomUUID();
    await mirror(live, { phase: "running", startTime: T0 });
    await rows().resourceGone(live, `ns/x-${live}`);
    expect(await read(live)).toMatchObject({
      status: "cancelled",
      error: "its resource was deleted from the cluster before it finished",
      resource_deleted_at: expect.any(Date),
      [k.end]: expect.any(Date),
    });
    // Final: a later mirror of an older observation cannot revive it.
    await mirror(live, { phase: "running" });
    expect(await read(live)).toMatchObject({ status: "cancelled" });

    const done = randomUUID();
    await mirror(done, { phase: "completed", exitCode: 0, startTime: T0, completionTime: T1 });
    await rows().resourceGone(done, `ns/x-${done}`);
    expect(await read(done)).toMatchObject({ status: "completed", exit_code: 0, error: null, [k.end]: new Date(T1), resource_deleted_at: expect.any(Date) });
  });

  it("the API's delete removes a row whose resource already left the cluster itself, for its own account only", async () => {
    const detached = randomUUID();
    await mirror(detached, { phase: "completed" });
    expect(await removeDetachedWorkload(database.db, k.rows.table, accountId, detached)).toBe(false);
    await rows().resourceGone(detached, `ns/x-${detached}`);
    expect(await removeDetachedWorkload(database.db, k.rows.table, randomUUID(), detached)).toBe(false);
    expect(await removeDetachedWorkload(database.db, k.rows.table, accountId, detached)).toBe(true);
    expect(await database.db.selectFrom(k.table).select("id").where("id", "=", detached).executeTakeFirst()).toBeUndefined();
  });

  it("answers Unreconcilable, not a retryable error, when Postgres cannot store the data", async () => {
    const id = randomUUID();
    const spec = { ...k.spec(id), ...(k.name === "runs" ? { command: ["echo", "a\u0000b"] } : { branch: "x\u0000" }) };
    await expect(rows().mirror({ namespace: "ns", name: `x-${id}`, createdAt: new Date(T0), spec, status: undefined })).rejects.toBeInstanceOf(Unreconcilable);
  });

  it("hiding is scoped to the account", async () => {
    const id = randomUUID();
    await mirror(id, undefined);
    await hideWorkload(database.db, k.rows.table, randomUUID(), id);
    expect(await rows().isHidden(id)).toBe(false);
  });

  it("answers orphaned, not an error, when the repository is gone", async () => {
    expect(await mirror(randomUUID(), { phase: "running" }, randomUUID())).toBe("orphaned");
  });

  it("mirrors a status while the log archiver writes the same row's lines, without deadlocking", async () => {
    // The archiver inserts lines (a key-share lock on the row, through their foreign key) and then
    // updates the row's byte counts; the mirror upserts the row and locks it to record transitions.
    const archive = logArchiveRows(database.db, k.rows.table);
    const ids = Array.from({ length: 12 }, () => randomUUID());
    for (const id of ids) await mirror(id, undefined);
    const phases = ["running", "running", "completed"] as const;
    const work = ids.flatMap((id) => [
      ...Array.from({ length: 6 }, (_, i) =>
        archive.write(
          id,
          [{ seq: i + 1, stream: "stdout" as const, ts: T0, line: `line ${i}` }],
          { stdout: (i + 1) * 7, stderr: 0 },
          { stdout: false, stderr: false },
        ),
      ),
      ...phases.map((phase, i) => mirror(id, { phase, startTime: T0, ...(i === 2 && { completionTime: T1, exitCode: 0 }) })),
    ]);
    const results = await Promise.allSettled(work);
    expect(results.filter((r) => r.status === "rejected").map((r) => String(r.reason))).toEqual([]);
    for (const id of ids) expect(await read(id)).toMatchObject({ status: "completed" });
  });

  it("keeps when the first line of output was stored, once: later and repeated lines do not move it", async () => {
    const id = randomUUID();
    await mirror(id, { phase: "running", startTime: T0 });
    const archive = logArchiveRows(database.db, k.rows.table);
    const bytes = { stdout: 1, stderr: 0 };
    const none = { stdout: false, stderr: false };
    expect(await read(id)).toMatchObject({ first_output_at: null });
    await archive.write(id, [], bytes, none);
    expect(await read(id)).toMatchObject({ first_output_at: null });
    await archive.write(
      id,
      [
        { seq: 2, stream: "stderr", ts: T1, line: "b" },
        { seq: 1, stream: "stdout", ts: T0, line: "a" },
      ],
      bytes,
      none,
    );
    await archive.write(id, [{ seq: 3, stream: "stdout", ts: "2026-01-01T00:02:00.000Z", line: "c" }], bytes, none);
    expect(await read(id)).toMatchObject({ first_output_at: new Date(T0) });
  });

  it("marks logs complete once", async () => {
    const id = randomUUID();
    await mirror(id, { phase: "completed" });
    await rows().markLogsComplete(id);
    expect(await read(id)).toMatchObject({ logs_complete: true });
  });
});

describe("a run's timeline marks", () => {
  const rows = () => workloadRows<RunSpec, RunStatus>(database.db, RUN_ROWS);
  const spec = (id: string) => kinds[0]!.spec(id) as RunSpec;
  const mirror = (id: string, status: RunStatus | undefined) =>
    rows().mirror({ namespace: "ns", name: `x-${id}`, createdAt: new Date(T0), spec: spec(id), status });
  const timeline = async (id: string) => (await database.db.selectFrom("runs").select("timeline").where("id", "=", id).executeTakeFirstOrThrow()).timeline;

  it("are mirrored with the status; a status without them (waiting for its environment) leaves them", async () => {
    const id = randomUUID();
    await mirror(id, undefined);
    expect(await timeline(id)).toBeNull();
    await mirror(id, { phase: "preprocessing", timeline: { admitted: T0 } });
    expect(await timeline(id)).toEqual({ admitted: T0 });
    await mirror(id, { phase: "preprocessing" });
    expect(await timeline(id)).toEqual({ admitted: T0 });
    await mirror(id, { phase: "running", startTime: T1, timeline: { admitted: T0, checkedOut: T1 } });
    expect(await timeline(id)).toEqual({ admitted: T0, checkedOut: T1 });
    // Final once terminal: a later write changes nothing.
    await mirror(id, { phase: "completed", exitCode: 0, startTime: T1, completionTime: T1, timeline: { admitted: T0, checkedOut: T1, environmentReady: T1 } });
    await mirror(id, { phase: "completed", exitCode: 0, startTime: T1, completionTime: T1, timeline: { admitted: T1 } });
    expect(await timeline(id)).toEqual({ admitted: T0, checkedOut: T1, environmentReady: T1 });
  });
});

describe("analysis results", () => {
  it("are stored once and never replaced", async () => {
    const id = randomUUID();
    await workloadRows(database.db, ANALYSIS_ROWS).mirror({
      namespace: "ns",
      name: `analysis-${id}`,
      createdAt: new Date(T0),
      spec: kinds[1]!.spec(id) as AnalysisSpec,
      status: undefined,
    });
    const result = (n: number) => ({ experiments: Array.from({ length: n }) }) as never;
    await saveAnalysisResult(database.db, id, result(1));
    await saveAnalysisResult(database.db, id, result(2));
    const row = await database.db.selectFrom("analyses").select("result").where("id", "=", id).executeTakeFirstOrThrow();
    expect((row.result as unknown as { experiments: unknown[] }).experiments).toHaveLength(1);
  });
});
