import { sql } from "kysely";
import type { Db } from "../../db/database.ts";
import { untyped, type WorkloadTable } from "../../db/workload-tables.ts";
import type { WorkloadSpec, WorkloadStatus } from "../../resources/common.ts";
import { transitionsSince } from "../../resources/lifecycle.ts";
import { isDataException, isForeignKeyViolation, isUniqueViolation } from "../shared/db-errors.ts";
import { Unreconcilable } from "./unreconcilable.ts";
import { eventFor, subjectKindOf } from "../notifications/events.ts";
import { enqueueEvent } from "../notifications/notification-rows.ts";

// The Postgres mirror of workload resources (runs, analyses), written once
// for every kind. A resource is the source of truth; its row is what the API
// reads. Writes are ordered by the lifecycle's rank so that an old or
// reordered observation can never move a row backwards, and a terminal row
// never changes again.

/** One kind of workload's row: its table and the columns only it has. */
export interface WorkloadRowKind<Spec extends WorkloadSpec> {
  readonly table: WorkloadTable;
  idOf(spec: Spec): string;
  /** Columns set when the row is inserted and never changed by a mirror. */
  insertOnly(spec: Spec): Record<string, unknown>;
  /**
   * Columns the kind derives from its status (a run's timeline), written with
   * the status; a status without them leaves what the row holds.
   */
  fromStatus?(status: WorkloadStatus | undefined): Record<string, unknown>;
  /**
   * Columns the kind derives from a status and overwrites with each status
   * written (a run's queue reason, null once admitted); a mirror without a
   * status (the API's, at creation) leaves them.
   */
  replacedFromStatus?(status: WorkloadStatus): Record<string, unknown>;
}

export interface WorkloadMirror<Spec, Status> {
  namespace: string;
  name: string;
  createdAt: Date;
  spec: Spec;
  status: Status | undefined;
}

/**
 * Inserts the row if it is missing (the API may have died between creating
 * the resource and the row) and applies the resource's status unless the row
 * already holds a later one, or is hidden (deleted through the API).
 */
export async function mirrorWorkload<Spec extends WorkloadSpec>(db: Db, kind: WorkloadRowKind<Spec>, m: WorkloadMirror<Spec, WorkloadStatus>): Promise<void> {
  await inTransaction(db, async (trx) => {
    await upsertWorkload(trx, kind, m);
    await recordTransitions(trx, kind.table, kind.idOf(m.spec));
  });
}

const inTransaction = <T>(db: Db, fn: (trx: Db) => Promise<T>): Promise<T> => (db.isTransaction ? fn(db) : db.transaction().execute(fn));

/**
 * Records the phases the row's status went through since the last one
 * recorded (lifecycle.ts transitionsSince), in the transaction that wrote the
 * status: the row is locked first, so concurrent writers record in turn and
 * the log stream never reads a status without the transitions that led to it.
 * A terminal transition also queues its notification deliveries here (the
 * outbox of docs/users/notifications.md): recorded once, so queued once.
 * FOR NO KEY UPDATE, the lock the upsert already holds: FOR UPDATE would also
 * wait for the key-share lock the log archiver's line inserts take on the row
 * (their foreign key), while the archiver waits for this transaction to update
 * the row's byte counts: a deadlock.
 */
export async function recordTransitions(trx: Db, t: WorkloadTable, id: string): Promise<void> {
  const q = untyped(trx);
  const row: { status: string; account_id: string; start: Date | null; end: Date | null } | undefined = await q
    .selectFrom(t.table)
    .select(["status", "account_id", `${t.startColumn} as start`, `${t.endColumn} as end`])
    .where("id", "=", id)
    .forNoKeyUpdate()
    .executeTakeFirst();
  if (!row) return;
  const recorded: { phase: string }[] = await q.selectFrom(t.transitionsTable).select("phase").where(t.key, "=", id).orderBy("seq").execute();
  const next = transitionsSince(
    t.lifecycle,
    recorded.map((r) => r.phase),
    { phase: row.status, startTime: row.start, endTime: row.end },
    new Date(),
  );
  if (next.length === 0) return;
  await q
    .insertInto(t.transitionsTable)
    .values(next.map((tr, i) => ({ [t.key]: id, seq: recorded.length + i + 1, phase: tr.phase, at: tr.at, inferred: tr.inferred })))
    .execute();
  const ending = next.find((tr) => t.lifecycle.isTerminal(tr.phase));
  const event = ending && eventFor(subjectKindOf(t.table), ending.phase);
  if (ending && event) await enqueueEvent(trx, { accountId: row.account_id, kind: subjectKindOf(t.table), subjectId: id, event, occurredAt: ending.at });
}

async function upsertWorkload<Spec extends WorkloadSpec>(db: Db, kind: WorkloadRowKind<Spec>, m: WorkloadMirror<Spec, WorkloadStatus>): Promise<void> {
  const t = kind.table;
  const phase = m.status?.phase ?? t.lifecycle.initial;
  const own = (column: string) => sql.ref(`${t.table}.${column}`);
  const derived = kind.fromStatus?.(m.status) ?? {};
  const replaced = (m.status && kind.replacedFromStatus?.(m.status)) || {};
  await untyped(db)
    .insertInto(t.table)
    .values({
      id: kind.idOf(m.spec),
      account_id: m.spec.accountId,
      repository_id: m.spec.repositoryId,
      commit_hash: m.spec.commitHash,
      workflow_id: `${m.namespace}/${m.name}`,
      status: phase,
      status_rank: t.lifecycle.rank(phase),
      ...kind.insertOnly(m.spec),
      ...derived,
      ...replaced,
      exit_code: m.status?.exitCode ?? null,
      error: m.status?.error ?? null,
      [t.startColumn]: m.status?.startTime ? new Date(m.status.startTime) : null,
      [t.endColumn]: m.status?.completionTime ? new Date(m.status.completionTime) : null,
      created_at: m.createdAt,
      updated_at: new Date(),
    })
    .onConflict((oc) =>
      oc
        .column("id")
        .doUpdateSet((eb) => ({
          status: eb.ref("excluded.status"),
          status_rank: eb.ref("excluded.status_rank"),
          exit_code: eb.ref("excluded.exit_code"),
          error: eb.ref("excluded.error"),
          [t.startColumn]: sql`coalesce(${sql.ref(`excluded.${t.startColumn}`)}, ${own(t.startColumn)})`,
          [t.endColumn]: eb.ref(`excluded.${t.endColumn}`),
          updated_at: eb.ref("excluded.updated_at"),
          ...Object.fromEntries(Object.keys(derived).map((c) => [c, sql`coalesce(${sql.ref(`excluded.${c}`)}, ${own(c)})`])),
          ...Object.fromEntries(Object.keys(replaced).map((c) => [c, eb.ref(`excluded.${c}`)])),
        }))
        .where(
          sql<boolean>`${own("deleted_at")} is null and (${own("status_rank")} < excluded.status_rank or (${own("status_rank")} = excluded.status_rank and ${own("status_rank")} < ${sql.lit(t.lifecycle.terminalRank)}))`,
        ),
    )
    .execute();
}

/** The row cannot be written: its repository or account is gone, or (for kinds with one) another live row holds its place. */
const isOrphanedWrite = (t: WorkloadTable, err: unknown) => isForeignKeyViolation(err) || (t.liveUniqueKey && isUniqueViolation(err));

/** Hides the row at once (DELETE through the API); the controller removes it once the resource is gone. */
export async function hideWorkload(db: Db, t: WorkloadTable, accountId: string, id: string): Promise<void> {
  await untyped(db).updateTable(t.table).set({ deleted_at: new Date() }).where("id", "=", id).where("account_id", "=", accountId).execute();
  // A deleted workload checks nothing out any more: its token goes now, not at its deadline.
  await db.deleteFrom("checkout_tokens").where("workload_id", "=", id).where("account_id", "=", accountId).execute();
}

/**
 * Removes the row, and by cascade its logs, when its resource has already left
 * the cluster (kubectl delete, retention): no controller will see it go, so the
 * API's DELETE finishes the job itself. False when the resource is still there.
 */
export async function removeDetachedWorkload(db: Db, t: WorkloadTable, accountId: string, id: string): Promise<boolean> {
  const res = await untyped(db)
    .deleteFrom(t.table)
    .where("id", "=", id)
    .where("account_id", "=", accountId)
    .where("resource_deleted_at", "is not", null)
    .executeTakeFirst();
  return res.numDeletedRows > 0n;
}

/**
 * What the reconciler reads and writes in Postgres, as one interface: the
 * reconciler's tests replace it with an in-memory fake.
 */
export interface WorkloadRows<Spec, Status> {
  /** "orphaned" when the row cannot exist any more: its repository or account is gone, or another live row holds its place. */
  mirror(m: WorkloadMirror<Spec, Status>): Promise<"mirrored" | "orphaned">;
  /** Deleted through the API while its resource still existed. */
  isHidden(id: string): Promise<boolean>;
  /**
   * The resource is gone. Deleted through the API (the row is hidden): so is
   * the row, and by cascade its log lines. Deleted any other way (kubectl,
   * retention): the row stays readable and remembers when; a workload that had
   * not finished is cancelled.
   */
  resourceGone(id: string, workflowId: string): Promise<void>;
  /** Nothing more will be archived: log streams may end. */
  markLogsComplete(id: string): Promise<void>;
}

export function workloadRows<Spec extends WorkloadSpec, Status extends WorkloadStatus>(db: Db, kind: WorkloadRowKind<Spec>): WorkloadRows<Spec, Status> {
  const t = kind.table;
  const q = untyped(db);
  return {
    async mirror(m) {
      try {
        await mirrorWorkload(db, kind, m);
        return "mirrored";
      } catch (err) {
        if (isOrphanedWrite(t, err)) return "orphaned";
        if (isDataException(err))
          throw new Unreconcilable("Unstorable", `its ${t.table} row cannot be stored: ${err instanceof Error ? err.message : String(err)}`);
        throw err;
      }
    },
    async isHidden(id) {
      const row = await q.selectFrom(t.table).select("id").where("id", "=", id).where("deleted_at", "is not", null).executeTakeFirst();
      return row !== undefined;
    },
    async resourceGone(id, workflowId) {
      await q.deleteFrom(t.table).where("workflow_id", "=", workflowId).where("id", "=", id).where("deleted_at", "is not", null).execute();
      const live = sql<boolean>`${sql.ref("status_rank")} < ${sql.lit(t.lifecycle.terminalRank)}`;
      await inTransaction(db, async (trx) => {
        await untyped(trx)
          .updateTable(t.table)
          .set({
            resource_deleted_at: new Date(),
            status: sql`case when ${live} then 'cancelled' else status end`,
            error: sql`case when ${live} then 'its resource was deleted from the cluster before it finished' else error end`,
            [t.endColumn]: sql`case when ${live} then now() else ${sql.ref(t.endColumn)} end`,
            status_rank: sql`greatest(status_rank, ${sql.lit(t.lifecycle.terminalRank)})`,
            updated_at: new Date(),
          })
          .where("workflow_id", "=", workflowId)
          .where("id", "=", id)
          .where("deleted_at", "is", null)
          .where("resource_deleted_at", "is", null)
          .execute();
        await recordTransitions(trx, t, id);
      });
    },
    async markLogsComplete(id) {
      await q.updateTable(t.table).set({ logs_complete: true }).where("id", "=", id).where("logs_complete", "=", false).execute();
    },
  };
}
