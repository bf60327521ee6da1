import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.ts";
import { createAccount } from "../../src/domain/accounts/accounts.ts";
import { createApiKey } from "../../src/domain/auth/api-keys.ts";
import { createRootLogger } from "../../src/logger.ts";
import { startService, type Service } from "../../src/main.ts";
import { createFixtureRepo, type FixtureRepo } from "../helpers/git-fixture.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/service.ts";

// The operator turns CODEPLANE_ALLOW_LOCAL_REPOSITORIES off and restarts: a
// repository registered from a file:// URL while it was on must not be served
// from its mirror any more, on the first read or any later one (the mirror
// on disk is fresh, so no fetch would ever run to refuse it).

let database: TestDatabase;
let dataDir: string;
let fixture: FixtureRepo;
let key: string;
let repoId: string;
const encryptionKey = randomBytes(32).toString("base64");

async function serve(allowLocal: boolean): Promise<Service> {
  const config = loadConfig({
    DATABASE_URL: database.url,
    CODEPLANE_ENCRYPTION_KEY: encryptionKey,
    CODEPLANE_DATA_DIR: dataDir,
    PORT: "0",
    CODEPLANE_HOST: "127.0.0.1",
    CODEPLANE_ALLOW_LOCAL_REPOSITORIES: String(allowLocal),
    CODEPLANE_MIGRATE_ON_START: "false",
    CODEPLANE_LOG_LEVEL: "silent",
  });
  return startService(config, createRootLogger(config.logLevel, { write: () => {} }));
}

const get = (service: Service, pathname: string) => fetch(service.url + pathname, { headers: { authorization: `Bearer ${key}` } });

beforeAll(async () => {
  database = await createTestDatabase();
  dataDir = mkdtempSync(path.join(tmpdir(), "codeplane-policy-"));
  fixture = await createFixtureRepo();
  const account = await createAccount(database.db, `policy-${randomBytes(4).toString("hex")}`);
  key = (await createApiKey(database.db, account.id, { name: "test" })).key;
  const permissive = await serve(true);
  try {
    const res = await fetch(`${permissive.url}/v1/repositories`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ url: fixture.url, name: "local" }),
    });
    expect(res.status).toBe(201);
    repoId = (await res.json()).id;
    expect((await get(permissive, `/v1/repositories/${repoId}/files/README.md`)).status).toBe(200);
  } finally {
    await permissive.close();
  }
});

afterAll(async () => {
  await database?.drop();
  rmSync(dataDir, { recursive: true, force: true });
  await fixture?.cleanup();
});

describe("a repository the clone URL policy no longer allows", () => {
  it("answers every read with 409 once local repositories are turned off", async () => {
    const strict = await serve(false);
    try {
      const reads = ["/refs", "/files", "/files/README.md", "/files?path=a", "/main/runs"];
      const statuses: Record<string, number[]> = {};
      for (const round of [1, 2]) {
        for (const read of reads) {
          const res = await get(strict, `/v1/repositories/${repoId}${read}`);
          (statuses[read] ??= []).push(res.status);
          if (round === 1 && res.status === 409) {
            expect((await res.json()).detail).toMatch(/clone URL policy: file:\/\/ clone URLs are not allowed/);
          }
        }
      }
      expect(statuses).toEqual(Object.fromEntries(reads.map((r) => [r, [409, 409]])));
      // The repository itself is still there to be seen and deleted.
      expect((await get(strict, `/v1/repositories/${repoId}`)).status).toBe(200);
    } finally {
      await strict.close();
    }
  });
});
