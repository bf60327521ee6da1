import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.ts";
import { generateApiKey } from "../../src/domain/auth/api-key-token.ts";
import { createFirstKeyIfEmpty, ensureSeededKey } from "../../src/domain/auth/bootstrap.ts";
import { createRootLogger } from "../../src/logger.ts";
import { startService } from "../../src/service.ts";
import { createTestDatabase } from "../helpers/service.ts";

// Replicas start together on a fresh install: both migrate the empty database
// and both make sure the seeded key works. Neither may fail.

const ROUNDS = 3;

describe("replicas starting together on an empty database", () => {
  it("both start, migrate once and share one account and one seeded key", { timeout: 120_000 }, async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const database = await createTestDatabase({ empty: true });
      const { key } = generateApiKey();
      const dataDirs = [0, 1].map(() => mkdtempSync(path.join(tmpdir(), "codeplane-race-")));
      const encryptionKey = randomBytes(32).toString("base64");
      const start = (dataDir: string) =>
        startService(
          loadConfig({
            DATABASE_URL: database.url,
            CODEPLANE_ENCRYPTION_KEY: encryptionKey,
            CODEPLANE_DATA_DIR: dataDir,
            PORT: "0",
            CODEPLANE_HOST: "127.0.0.1",
            CODEPLANE_MIGRATE_ON_START: "true",
            CODEPLANE_BOOTSTRAP_API_KEY: key,
            CODEPLANE_LOG_LEVEL: "silent",
          }),
          createRootLogger("silent"),
        );
      const results = await Promise.allSettled(dataDirs.map(start));
      const services = results.flatMap((r) => (r.status === "fulfilled" ? [r.value] : []));
      try {
        expect(
          results.map((r) => (r.status === "rejected" ? String(r.reason) : "ok")),
          `round ${round}`,
        ).toEqual(["ok", "ok"]);
        for (const s of services) {
          const res = await fetch(`${s.url}/v1/repositories`, { headers: { authorization: `Bearer ${key}` } });
          expect(res.status).toBe(200);
        }
        expect(await database.db.selectFrom("accounts").select("name").execute()).toEqual([{ name: "default" }]);
        expect((await database.db.selectFrom("api_keys").select("id").execute()).length).toBe(1);
      } finally {
        for (const s of services) await s.close();
        await database.drop();
        for (const d of dataDirs) rmSync(d, { recursive: true, force: true });
      }
    }
  });

  it("creates the first key once when two processes find the database empty at once", async () => {
    const database = await createTestDatabase();
    try {
      const outcomes = await Promise.allSettled([createFirstKeyIfEmpty(database.db, "first"), createFirstKeyIfEmpty(database.db, "first")]);
      expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "fulfilled"]);
      const keys = outcomes.map((o) => (o.status === "fulfilled" ? o.value : "failed"));
      expect(keys.filter((k) => k !== null)).toHaveLength(1);
      expect((await database.db.selectFrom("accounts").select("name").execute()).map((a) => a.name)).toEqual(["first"]);
    } finally {
      await database.drop();
    }
  });

  it("seeds the same key from many processes at once", async () => {
    const database = await createTestDatabase();
    try {
      const { key } = generateApiKey();
      const outcomes = await Promise.allSettled(Array.from({ length: 4 }, () => ensureSeededKey(database.db, "seeded", key)));
      expect(outcomes.map((o) => (o.status === "rejected" ? String(o.reason) : "ok"))).toEqual(["ok", "ok", "ok", "ok"]);
      expect(outcomes.filter((o) => o.status === "fulfilled" && o.value.created)).toHaveLength(1);
      expect((await database.db.selectFrom("api_keys").select("id").execute()).length).toBe(1);
    } finally {
      await database.drop();
    }
  });
});
