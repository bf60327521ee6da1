import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createFixtureRepo, type FixtureRepo } from "../helpers/git-fixture.ts";
import { startTestService, type TestService } from "../helpers/service.ts";

// The operator turns CODEPLANE_ALLOW_LOCAL_REPOSITORIES off and restarts: a
// repository registered from a file:// URL while it was on must not be served
// from its mirror any more, on the first read or any later one (the mirror
// on disk is fresh, so no fetch would ever run to refuse it).

let permissive: TestService;
let dataDir: string;
let fixture: FixtureRepo;
let key: string;
let repoId: string;

/** The same database, mirror cache and encryption key as the permissive service, with local repositories off. */
const strictService = () =>
  startTestService({
    DATABASE_URL: permissive.databaseUrl,
    CODEPLANE_DATA_DIR: dataDir,
    CODEPLANE_ENCRYPTION_KEY: permissive.encryptionKey,
    CODEPLANE_ALLOW_LOCAL_REPOSITORIES: "false",
    CODEPLANE_LOG_LEVEL: "silent",
  });

const get = (service: { url: string }, pathname: string) => fetch(service.url + pathname, { headers: { authorization: `Bearer ${key}` } });

beforeAll(async () => {
  dataDir = mkdtempSync(path.join(tmpdir(), "codeplane-policy-"));
  fixture = await createFixtureRepo();
  permissive = await startTestService({ CODEPLANE_DATA_DIR: dataDir, CODEPLANE_ALLOW_LOCAL_REPOSITORIES: "true", CODEPLANE_LOG_LEVEL: "silent" });
  const tenant = await permissive.tenant();
  key = tenant.key;
  const res = await tenant.api("/v1/repositories", { method: "POST", json: { url: fixture.url, name: "local" } });
  expect(res.status).toBe(201);
  repoId = (await res.json()).id;
  expect((await get(permissive, `/v1/repositories/${repoId}/files/README.md`)).status).toBe(200);
  await permissive.stop();
});

afterAll(async () => {
  await permissive?.close();
  rmSync(dataDir, { recursive: true, force: true });
  await fixture?.cleanup();
});

describe("a repository the clone URL policy no longer allows", () => {
  it("answers every read with 409 once local repositories are turned off", async () => {
    const strict = await strictService();
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
