import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DomainError } from "../../src/domain/errors.ts";
import type { GitSource } from "../../src/domain/repositories/git-port.ts";
import { RunService, type RunLauncher } from "../../src/domain/runs/runs.ts";
import { createRootLogger } from "../../src/logger.ts";
import { DEFAULT_COMPUTE_TYPES } from "../../src/resources/compute-types.ts";
import { seedAccountWithRepository } from "../helpers/seed.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/service.ts";

// The waiting limit under concurrent requests, on real Postgres: the count and
// the creation hold the account's advisory lock, so requests that arrive
// together cannot all pass the check; the refused ones reach the cluster never.

let database: TestDatabase;
let accountId: string;
let repositoryId: string;
let created: string[];

beforeAll(async () => {
  database = await createTestDatabase();
  ({ accountId, repositoryId } = await seedAccountWithRepository(database.db));
});
afterAll(() => database?.drop());

const launcher: RunLauncher = {
  namespace: "codeplane",
  create: async (spec) => {
    created.push(spec.runId);
    // The cluster takes its time: the other requests arrive meanwhile.
    await new Promise((r) => setTimeout(r, 50));
    return { metadata: { name: `run-${spec.runId}`, namespace: "codeplane" } };
  },
  requestCancel: async () => true,
  delete: async () => {},
};

const service = (waiting: number) =>
  new RunService({
    git: { resolveCommit: async () => "c".repeat(40) } as unknown as GitSource,
    experiments: { experiment: async () => null, environmentOf: async () => null },
    launcher,
    environments: { planRun: async (_db, _run, _env, image) => ({ image, environment: undefined, record: null }) },
    runnerImage: "runner:test",
    computeTypes: DEFAULT_COMPUTE_TYPES,
    defaultComputeType: "cpu-general",
    defaultTimeoutSeconds: 60,
    maxTimeoutSeconds: 3600,
    limits: { executingPerAccount: 0, waitingPerAccount: waiting, executingTotal: 0, cpuPerAccount: 0, memoryPerAccount: 0, retryAfterSeconds: 5 },
    logger: createRootLogger("silent"),
  });

describe("the waiting limit under concurrent requests", () => {
  it("lets exactly the limit through and refuses the rest before the cluster is asked", async () => {
    created = [];
    const runs = service(3);
    const results = await Promise.allSettled(Array.from({ length: 8 }, () => runs.create(database.db, accountId, repositoryId, "main", { command: ["true"] })));
    const ok = results.filter((r) => r.status === "fulfilled");
    const refused = results.filter((r): r is PromiseRejectedResult => r.status === "rejected");
    expect(ok).toHaveLength(3);
    expect(created).toHaveLength(3);
    for (const r of refused) {
      expect(r.reason).toBeInstanceOf(DomainError);
      expect(r.reason).toMatchObject({ kind: "too_many_requests", retryAfterSeconds: 5 });
    }
    expect(refused).toHaveLength(5);
    const rows = await database.db.selectFrom("runs").select("status").where("account_id", "=", accountId).execute();
    expect(rows.map((r) => r.status)).toEqual(["pending", "pending", "pending"]);
  });
});
