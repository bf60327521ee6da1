// A finished run's stored output, read the moment its status turns terminal:
// the last lines may still be on their way from the pod log to Postgres, so
// the read waits (bounded) for the controller to say the archive is complete.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunsTable } from "../../src/db/schema.ts";
import { createAccount } from "../../src/domain/accounts/accounts.ts";
import { readRunLog } from "../../src/domain/runs/run-logs.ts";
import { newId } from "../../src/domain/shared/ids.ts";
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

const insertRun = (status: RunsTable["status"], logsComplete: boolean) => insertRunRow(database.db, { accountId, repositoryId, status, logsComplete });

async function archive(runId: string, lines: string[], complete: boolean) {
  await database.db
    .insertInto("run_log_lines")
    .values(lines.map((line, i) => ({ run_id: runId, seq: i + 1, stream: "stdout" as const, ts: new Date(), line })))
    .execute();
  if (complete) await database.db.updateTable("runs").set({ logs_complete: true }).where("id", "=", runId).execute();
}

describe("reading a run's stored output", () => {
  it("waits for a finished run's archive to complete, then serves all of it", async () => {
    const id = await insertRun("completed", false);
    const read = readRunLog(database.db, accountId, id, "stdout", { settleMs: 10_000, pollMs: 20 });
    await new Promise((r) => setTimeout(r, 300));
    await archive(id, ["token=s3cret", "done"], true);
    expect((await read).content).toBe("token=s3cret\ndone\n");
  });

  it("serves what is stored once the wait runs out (a controller that is away does not hang readers)", async () => {
    const id = await insertRun("failed", false);
    await archive(id, ["partial"], false);
    const started = Date.now();
    const log = await readRunLog(database.db, accountId, id, "stdout", { settleMs: 200, pollMs: 20 });
    expect(log.content).toBe("partial\n");
    expect(Date.now() - started).toBeGreaterThanOrEqual(200);
  });

  it("does not wait for a run that is still going: its output so far is the answer", async () => {
    const id = await insertRun("running", false);
    await archive(id, ["so far"], false);
    const started = Date.now();
    expect((await readRunLog(database.db, accountId, id, "stdout", { settleMs: 5_000 })).content).toBe("so far\n");
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it("is a 404 for another account's run, without waiting", async () => {
    const id = await insertRun("completed", false);
    const other = (await createAccount(database.db, `other-${newId().slice(-12)}`)).id;
    await expect(readRunLog(database.db, other, id, "stdout", { settleMs: 5_000 })).rejects.toMatchObject({ kind: "not_found" });
  });
});
