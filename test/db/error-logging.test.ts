import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, type DatabaseHandle } from "../../src/db/database.ts";
import { migrateToLatest } from "../../src/db/migrate.ts";
import { createRootLogger } from "../../src/logger.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/service.ts";

// A failing query logged as `err` never puts its bound parameters (or the
// values Postgres quotes back in its message and detail) into the log, with
// either database kind: key hashes and secrets are parameters.

const silent = createRootLogger("silent");
let pgDatabase: TestDatabase;
let dataDir: string;
const kinds: { name: string; handle: DatabaseHandle }[] = [];

beforeAll(async () => {
  pgDatabase = await createTestDatabase();
  kinds.push({ name: "postgres", handle: await openDatabase({ url: pgDatabase.url, poolMax: 2, dataDir: "/nonexistent", logger: silent }) });
  dataDir = mkdtempSync(path.join(tmpdir(), "codeplane-pglite-"));
  const embedded = await openDatabase({ url: null, poolMax: 1, dataDir, logger: silent });
  await migrateToLatest(embedded.db, silent);
  kinds.push({ name: "embedded", handle: embedded });
}, 120_000);
afterAll(async () => {
  for (const k of kinds) await k.handle.close();
  await pgDatabase?.drop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

async function failure(run: () => Promise<unknown>): Promise<unknown> {
  try {
    await run();
  } catch (err) {
    return err;
  }
  throw new Error("the query did not fail");
}

function logged(err: unknown): string {
  const lines: string[] = [];
  const logger = createRootLogger("info", { write: (l: string) => void lines.push(l) });
  logger.error({ err }, "unhandled error");
  logger.child({ request_id: "r" }).warn({ error: err }, "child logger, other key");
  return lines.join("\n");
}

describe.each(["postgres", "embedded"])("database errors in the log (%s)", (kindName) => {
  const db = () => kinds.find((k) => k.name === kindName)!.handle.db;

  it("leaves out the parameters of a unique violation, and the detail that quotes them", async () => {
    const accountId = randomUUID();
    await db()
      .insertInto("accounts")
      .values({ id: accountId, name: `a-${accountId.slice(0, 8)}` })
      .execute();
    const hash = `${randomUUID().replaceAll("-", "")}deadbeefhash`;
    const row = () => ({ id: randomUUID(), account_id: accountId, name: "k", prefix: "cp_x", key_hash: hash, scopes: ["keys:write"] });
    await db().insertInto("api_keys").values(row()).execute();
    const err = await failure(() => db().insertInto("api_keys").values(row()).execute());
    expect(JSON.stringify(err, Object.getOwnPropertyNames(err)) + String((err as Error).stack)).toContain(hash.slice(0, 12)); // the raw error does carry it
    const out = logged(err);
    expect(out).not.toContain(hash.slice(0, 12));
    expect(out).toContain("23505");
    expect(out).toContain("api_keys_key_hash_key");
  });

  it("masks a parameter Postgres quotes back in the message", async () => {
    const secret = "cp_SECRETsecretSECRETsecretSECRET123456";
    const err = await failure(() => db().selectFrom("api_keys").select("id").where("id", "=", secret).execute());
    expect(String((err as Error).message)).toContain(secret);
    const out = logged(err);
    expect(out).not.toContain(secret);
    expect(out).toContain("invalid input syntax for type uuid");
  });

  it("masks literal values in logged query text", async () => {
    const secret = "literal-secret-value-42";
    const err = await failure(() => sql`select ${sql.lit(secret)}::uuid`.execute(db()));
    const out = logged(err);
    expect(out).not.toContain(secret);
  });
});
