// $CODEPLANE_METRICS_FILE from end to end but for the kubelet: the real runner entrypoint runs a
// command that appends records to the file and prints ::metric lines; its framed stdout is served
// as a pod log to the real log archiver, which stores lines and metrics in a real Postgres. Then
// the same log is archived again, as after a controller restart: nothing is counted twice.
import { spawn } from "node:child_process";
import { copyFileSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Writable } from "node:stream";
import type { Log } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LogArchiver } from "../../src/controller/log-archiver.ts";
import { RUN_TABLE } from "../../src/db/workload-tables.ts";
import { readRunMetrics, runMetricsArchiveHook } from "../../src/domain/runs/run-metrics.ts";
import { logArchiveRows } from "../../src/domain/workloads/log-archive-rows.ts";
import { createRootLogger } from "../../src/logger.ts";
import { insertRunRow, seedAccountWithRepository } from "../helpers/seed.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/service.ts";

const root = new URL("../..", import.meta.url).pathname;
const NODE = Number(process.versions.node.split(".")[0]) >= 24 ? process.execPath : join(root, "node_modules/.bin/node");

let database: TestDatabase;
let accountId: string;
let repositoryId: string;
let dir: string;

beforeAll(async () => {
  database = await createTestDatabase();
  ({ accountId, repositoryId } = await seedAccountWithRepository(database.db));
  // A lone copy, as in the pod.
  dir = realpathSync(mkdtempSync(join(tmpdir(), "cp-metrics-file-")));
  copyFileSync(join(root, "packages/runner/src/entrypoint.ts"), join(dir, "entrypoint.ts"));
});
afterAll(async () => {
  await database?.drop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const SCRIPT = `
echo '{"name":"loss","value":4,"step":0}' >> "$CODEPLANE_METRICS_FILE"
echo "::metric name=printed::1"
sleep 0.6
echo '{"step":1,"metrics":{"loss":2,"acc":0.5}}' >> "$CODEPLANE_METRICS_FILE"
echo 'not a record' >> "$CODEPLANE_METRICS_FILE"
echo "::metric name=printed::2"
printf '%s' '{"name":"loss","value":1,"step":2}' >> "$CODEPLANE_METRICS_FILE"
`;

/** Runs the entrypoint once and keeps its framed stdout: the container's log. */
function runEntrypoint(): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = spawn(NODE, [join(dir, "entrypoint.ts"), "--", "sh", "-c", SCRIPT], {
      stdio: ["ignore", "pipe", "inherit"],
      env: { ...process.env, CODEPLANE_METRICS_FILE: "" },
    });
    const out: Buffer[] = [];
    child.stdout.on("data", (c: Buffer) => out.push(c));
    child.on("error", reject);
    child.on("close", () => resolve(Buffer.concat(out)));
  });
}

/** A pod-log API that serves `log` to every follow, as the kubelet does for a finished container. */
function podLog(log: Buffer): Log {
  return {
    log: async (_ns: string, _pod: string, _container: string, sink: Writable) => {
      setImmediate(() => sink.end(log));
      return new AbortController();
    },
  } as unknown as Log;
}

async function archiveOnce(runId: string, log: Buffer): Promise<void> {
  await new Promise<void>((resolve) => {
    const archiver = new LogArchiver({
      rows: logArchiveRows(database.db, RUN_TABLE, runMetricsArchiveHook({ maxSeries: 10, maxPointsPerSeries: 100, maxNameLength: 64 })),
      log: podLog(log),
      logger: createRootLogger("silent"),
      maxBytesPerStream: 1024 * 1024,
      containerState: async () => "terminated",
      onComplete: () => resolve(),
    });
    archiver.ensure(runId, { namespace: "n", pod: "p", container: "main" });
  });
}

describe("the metrics file, through the runner's frames and the archiver", () => {
  it("becomes series beside the printed ones, counted once however often the log is read", { timeout: 60_000 }, async () => {
    const log = await runEntrypoint();
    const runId = await insertRunRow(database.db, { accountId, repositoryId, status: "completed" });
    await archiveOnce(runId, log);
    const expected = {
      acc: [[1, 0.5]],
      loss: [
        [0, 4],
        [1, 2],
        [2, 1],
      ],
      printed: [
        [0, 1],
        [1, 2],
      ],
    };
    const shape = async () => {
      const m = await readRunMetrics(database.db, accountId, runId);
      return { series: Object.fromEntries(m.series.map((s) => [s.name, s.points.map((p) => [p.step, p.value])])), final: m.final, dropped: m.dropped };
    };
    expect(await shape()).toEqual({ series: expected, final: { acc: 0.5, loss: 1, printed: 2 }, dropped: 0 });
    // The records are not output: stdout holds what the command printed.
    const lines = await database.db.selectFrom("run_log_lines").select("line").where("run_id", "=", runId).orderBy("seq").execute();
    expect(lines.map((l) => l.line)).toEqual(["::metric name=printed::1", "::metric name=printed::2"]);

    // A controller restart reads the whole log again.
    await database.db.updateTable("runs").set({ logs_complete: false }).where("id", "=", runId).execute();
    await archiveOnce(runId, log);
    expect(await shape()).toEqual({ series: expected, final: { acc: 0.5, loss: 1, printed: 2 }, dropped: 0 });
  });
});
