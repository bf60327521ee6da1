import { createHash } from "node:crypto";
import { sql, type ExpressionBuilder } from "kysely";
import type { Db } from "../../db/database.ts";
import type { Database, EnvironmentDefinitionJson, EnvironmentRow } from "../../db/schema.ts";
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

/**
 * Hides the row at once (DELETE /v1/environments/{key}): the next run of its key reserves a new one.
 * Its archive stays until the purge finds no unfinished run pinned to it (purgeableEnvironments).
 */
export async function deleteEnvironmentRow(db: Db, id: string): Promise<void> {
  await db.updateTable("environments").set({ deleted_at: new Date(), upload_token_hash: null }).where("id", "=", id).where("deleted_at", "is", null).execute();
}

/** Run phases before the command starts: a run in one of them may still fetch its environment's archive. */
export const RESTORE_PENDING_PHASES = ["pending", "preprocessing"] as const;

/** Whether a run that has not yet restored its environment holds a pin on this row. */
const pinnedByUnfinishedRun = (eb: ExpressionBuilder<Database, "environments">) =>
  eb.exists(
    eb
      .selectFrom("environment_pins as p")
      .innerJoin("runs as r", "r.id", "p.run_id")
      .select(sql`1`.as("one"))
      .whereRef("p.environment_id", "=", "environments.id")
      .where("r.status", "in", RESTORE_PENDING_PHASES),
  );

/**
 * Promises this ready environment's archive to a run about to get its Job: the archive stays in the
 * store until the run is past its restore, whatever eviction or DELETE do meanwhile. False when the
 * row is no longer live and ready (dropped since the caller read it): the run must not be promised it.
 * The row is locked (FOR SHARE) while the pin is written, so a concurrent hide either sees the pin or
 * happens first and is seen here.
 */
export async function pinForRun(db: Db, environmentId: string, runId: string): Promise<boolean> {
  return db.transaction().execute(async (tx) => {
    const live = await tx
      .selectFrom("environments")
      .select("id")
      .where("id", "=", environmentId)
      .where("status", "=", "ready")
      .where("deleted_at", "is", null)
      .forShare()
      .executeTakeFirst();
    if (!live) return false;
    await tx
      .insertInto("environment_pins")
      .values({ environment_id: environmentId, run_id: runId })
      .onConflict((oc) => oc.columns(["environment_id", "run_id"]).doNothing())
      .execute();
    return true;
  });
}

/**
 * The stored environment a run's restore gets: the one it was promised (pinned) when its Job was
 * made, even if deleted or evicted since; for a run without a pin (made before pins), the live one.
 */
export async function archiveForRun(db: Db, accountId: string, runId: string, key: string): Promise<EnvironmentRow | undefined> {
  const pinned = await db
    .selectFrom("environments")
    .innerJoin("environment_pins as p", "p.environment_id", "environments.id")
    .selectAll("environments")
    .where("p.run_id", "=", runId)
    .where("environments.account_id", "=", accountId)
    .where("environments.key", "=", key)
    .where("environments.status", "=", "ready")
    .orderBy("p.created_at", "desc")
    .executeTakeFirst();
  return pinned ?? (await findEnvironment(db, accountId, key));
}

/**
 * Eviction's hide: the row is hidden only if it is still live, ready and pinned by no unfinished run,
 * decided under its row lock (a pin being written waits for it, or is seen). False: left alone.
 */
export async function hideUnpinned(db: Db, id: string): Promise<boolean> {
  return db.transaction().execute(async (tx) => {
    const row = await tx
      .selectFrom("environments")
      .select("id")
      .where("id", "=", id)
      .where("status", "=", "ready")
      .where("deleted_at", "is", null)
      .forUpdate()
      .executeTakeFirst();
    if (!row) return false;
    const pinned = await tx.selectFrom("environments").select("id").where("id", "=", id).where(pinnedByUnfinishedRun).executeTakeFirst();
    if (pinned) return false;
    await tx.updateTable("environments").set({ deleted_at: new Date(), upload_token_hash: null }).where("id", "=", id).execute();
    return true;
  });
}

/**
 * Total bytes of stored archives (all accounts: the store's bound is the operator's), hidden ones
 * not yet purged included: they still take room in the store.
 */
export async function storedBytes(db: Db): Promise<number> {
  const row = await db
    .selectFrom("environments")
    .select(sql<string>`coalesce(sum(size), 0)`.as("bytes"))
    .where("status", "=", "ready")
    .executeTakeFirstOrThrow();
  return Number(row.bytes);
}

/** Live ready environments no unfinished run is pinned to, least recently used first (eviction order). */
export function leastRecentlyUsed(db: Db, limit: number): Promise<EnvironmentRow[]> {
  return db
    .selectFrom("environments")
    .selectAll()
    .where("status", "=", "ready")
    .where("deleted_at", "is", null)
    .where((eb) => eb.not(pinnedByUnfinishedRun(eb)))
    .orderBy("last_used_at", "asc")
    .orderBy("id", "asc")
    .limit(limit)
    .execute();
}

/**
 * Hidden rows (deleted or evicted) whose archive no unfinished run is pinned to, oldest first: the
 * purge deletes each one's archive, then the row. A row is hidden before it is purged and nothing
 * pins a hidden row, so once listed here a row is never needed again.
 */
export function purgeableEnvironments(db: Db, limit: number): Promise<EnvironmentRow[]> {
  return db
    .selectFrom("environments")
    .selectAll()
    .where("deleted_at", "is not", null)
    .where((eb) => eb.not(pinnedByUnfinishedRun(eb)))
    .orderBy("deleted_at", "asc")
    .orderBy("id", "asc")
    .limit(limit)
    .execute();
}

/** Whether this row is hidden and no unfinished run is pinned to it: its archive may go. */
export async function isPurgeable(db: Db, id: string): Promise<boolean> {
  const row = await db
    .selectFrom("environments")
    .select("id")
    .where("id", "=", id)
    .where("deleted_at", "is not", null)
    .where((eb) => eb.not(pinnedByUnfinishedRun(eb)))
    .executeTakeFirst();
  return row !== undefined;
}

/** Pins of runs past their restore (or gone) hold nothing: up to `limit` of them go. */
export async function dropSpentPins(db: Db, limit: number): Promise<void> {
  await sql`delete from environment_pins where (environment_id, run_id) in (
    select p.environment_id, p.run_id from environment_pins p left join runs r on r.id = p.run_id
    where r.id is null or r.status not in (${sql.join(RESTORE_PENDING_PHASES.map((x) => sql.lit(x)))})
    limit ${limit})`.execute(db);
}

/** The hidden row goes for good (its pins with it), once its archive is gone. */
export async function deletePurgedRow(db: Db, id: string): Promise<void> {
  await db
    .deleteFrom("environments")
    .where("id", "=", id)
    .where("deleted_at", "is not", null)
    .where((eb) => eb.not(pinnedByUnfinishedRun(eb)))
    .execute();
}

/**
 * What the newest row of this key (live or hidden) says the environment is: its image and definition
 * as the run's analysis resolved them, for a re-reservation that has only the run's spec at hand.
 */
export async function describedEnvironment(db: Db, accountId: string, key: string): Promise<Pick<EnvironmentRow, "image" | "definition"> | undefined> {
  return db
    .selectFrom("environments")
    .select(["image", "definition"])
    .where("account_id", "=", accountId)
    .where("key", "=", key)
    .orderBy("created_at", "desc")
    .orderBy("id", "desc")
    .executeTakeFirst();
}

/** The object store key of an environment's archive: per account, so no two accounts ever share an object. */
export const archiveObjectKey = (row: Pick<EnvironmentRow, "account_id" | "key" | "id">) => `environments/${row.account_id}/${row.key}/${row.id}.tar.gz`;
