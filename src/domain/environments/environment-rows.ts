import { createHash } from "node:crypto";
import { sql } from "kysely";
import type { Db } from "../../db/database.ts";
import type { EnvironmentDefinitionJson, EnvironmentRow } from "../../db/schema.ts";
import { keysetPage } from "../shared/keyset.ts";
import type { PageRequest } from "../shared/pagination.ts";
import { iso, isoOrNull } from "../shared/time.ts";
import { newId } from "../shared/ids.ts";
import type { Environment } from "./environments.schemas.ts";

// Environments in Postgres. A row is the cache entry of one account's key:
// `building` until its build Job has stored the archive, then `ready`, or
// `failed` with the build's log. Every query is scoped to the account.

export const hashUploadToken = (token: string): string => createHash("sha256").update(token).digest("hex");

/** The API's view; the build's log (up to 256 KiB) only when asked for one environment, never in a list. */
export function toEnvironment(r: EnvironmentRow, withLog = false): Environment {
  const d = r.definition;
  return {
    key: r.key,
    image: r.image,
    status: r.status,
    size: r.size === null ? null : Number(r.size),
    repository_id: r.repository_id,
    commit_hash: r.commit_hash,
    toolchains: d.toolchains,
    manifests: d.manifests,
    steps: d.steps,
    error: r.error,
    log: withLog ? r.log : null,
    created_at: iso(r.created_at),
    completed_at: isoOrNull(r.completed_at),
    last_used_at: iso(r.last_used_at),
  };
}

/** The account's live environment of this key. */
export function findEnvironment(db: Db, accountId: string, key: string): Promise<EnvironmentRow | undefined> {
  return db
    .selectFrom("environments")
    .selectAll()
    .where("account_id", "=", accountId)
    .where("key", "=", key)
    .where("deleted_at", "is", null)
    .executeTakeFirst();
}

export function findEnvironmentById(db: Db, id: string): Promise<EnvironmentRow | undefined> {
  return db.selectFrom("environments").selectAll().where("id", "=", id).where("deleted_at", "is", null).executeTakeFirst();
}

export function listEnvironments(db: Db, accountId: string, page: PageRequest): Promise<EnvironmentRow[]> {
  return keysetPage(db.selectFrom("environments").selectAll().where("account_id", "=", accountId).where("deleted_at", "is", null), page).execute();
}

export interface NewEnvironment {
  accountId: string;
  repositoryId: string;
  commitHash: string;
  key: string;
  image: string;
  definition: EnvironmentDefinitionJson;
}

/**
 * The live row of this key, inserted as `building` if there is none. The
 * unique index on the live (account, key) is what makes concurrent runs of a
 * new environment agree on one row, and so on one build.
 */
export async function reserveEnvironment(db: Db, e: NewEnvironment): Promise<{ row: EnvironmentRow; created: boolean }> {
  const inserted = await db
    .insertInto("environments")
    .values({
      id: newId(),
      account_id: e.accountId,
      repository_id: e.repositoryId,
      commit_hash: e.commitHash,
      key: e.key,
      image: e.image,
      definition: JSON.stringify(e.definition),
      status: "building",
    })
    .onConflict((oc) => oc.columns(["account_id", "key"]).where("deleted_at", "is", null).doNothing())
    .returningAll()
    .executeTakeFirst();
  if (inserted) return { row: inserted, created: true };
  const row = await findEnvironment(db, e.accountId, e.key);
  if (row) return { row, created: false };
  // Deleted between the insert and the read: try once more.
  return reserveEnvironment(db, e);
}

/**
 * Claims the build: records its upload token (its hash), deadline and start,
 * only if nobody has since the caller looked (started_at still what it saw).
 * Every waiting run of a key may try at once; exactly one wins and makes the Job.
 */
export async function claimBuild(db: Db, id: string, seenStartedAt: Date | null, uploadToken: string, deadline: Date): Promise<boolean> {
  let q = db
    .updateTable("environments")
    .set({ upload_token_hash: hashUploadToken(uploadToken), build_deadline: deadline, started_at: new Date() })
    .where("id", "=", id)
    .where("status", "=", "building")
    .where("deleted_at", "is", null);
  q = seenStartedAt === null ? q.where("started_at", "is", null) : q.where("started_at", "=", seenStartedAt);
  const res = await q.executeTakeFirst();
  return res.numUpdatedRows > 0n;
}

/** The building environment an upload token opens (before its deadline), or undefined. */
export async function environmentForUpload(db: Db, id: string, token: string, now = new Date()): Promise<EnvironmentRow | undefined> {
  return db
    .selectFrom("environments")
    .selectAll()
    .where("id", "=", id)
    .where("deleted_at", "is", null)
    .where("status", "=", "building")
    .where("upload_token_hash", "=", hashUploadToken(token))
    .where("build_deadline", ">", now)
    .executeTakeFirst();
}

/** The archive is stored: the environment is ready (once; a later upload changes nothing). */
export async function markReady(db: Db, id: string, stored: { size: number; sha256: string }): Promise<boolean> {
  const res = await db
    .updateTable("environments")
    .set({ status: "ready", size: stored.size, sha256: stored.sha256, completed_at: new Date(), last_used_at: new Date(), upload_token_hash: null })
    .where("id", "=", id)
    .where("status", "=", "building")
    .where("deleted_at", "is", null)
    .executeTakeFirst();
  return res.numUpdatedRows > 0n;
}

export async function markFailed(db: Db, id: string, error: string, log: string | null): Promise<void> {
  await db
    .updateTable("environments")
    .set({ status: "failed", error: error.slice(0, 4000), log, completed_at: new Date(), upload_token_hash: null })
    .where("id", "=", id)
    .where("status", "=", "building")
    .execute();
}

/** Keeps the build's log (handed in by its save container, or read from its pod once the Job has ended), once. */
export async function saveBuildLog(db: Db, id: string, log: string): Promise<void> {
  await db.updateTable("environments").set({ log }).where("id", "=", id).where("log", "is", null).execute();
}

export async function touchEnvironment(db: Db, id: string, now = new Date()): Promise<void> {
  await db.updateTable("environments").set({ last_used_at: now }).where("id", "=", id).execute();
}

/** Hides the row at once; its archive goes with it (the caller deletes the object). */
export async function deleteEnvironmentRow(db: Db, id: string): Promise<void> {
  await db.updateTable("environments").set({ deleted_at: new Date(), upload_token_hash: null }).where("id", "=", id).execute();
}

/** Total bytes of ready archives (all accounts: the store's bound is the operator's). */
export async function storedBytes(db: Db): Promise<number> {
  const row = await db
    .selectFrom("environments")
    .select(sql<string>`coalesce(sum(size), 0)`.as("bytes"))
    .where("status", "=", "ready")
    .where("deleted_at", "is", null)
    .executeTakeFirstOrThrow();
  return Number(row.bytes);
}

/** Ready environments, least recently used first (eviction order). */
export function leastRecentlyUsed(db: Db, limit: number): Promise<EnvironmentRow[]> {
  return db
    .selectFrom("environments")
    .selectAll()
    .where("status", "=", "ready")
    .where("deleted_at", "is", null)
    .orderBy("last_used_at", "asc")
    .orderBy("id", "asc")
    .limit(limit)
    .execute();
}

/** The object store key of an environment's archive: per account, so no two accounts ever share an object. */
export const archiveObjectKey = (row: Pick<EnvironmentRow, "account_id" | "key" | "id">) => `environments/${row.account_id}/${row.key}/${row.id}.tar.gz`;
