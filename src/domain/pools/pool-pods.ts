import { createHash, randomBytes } from "node:crypto";
import { EventEmitter } from "node:events";
import { sql } from "kysely";
import type { Db } from "../../db/database.ts";
import type { PoolPodsTable } from "../../db/schema.ts";
import type { Selectable } from "kysely";
import type { SecretBox } from "../crypto/secret-box.ts";
import type { AgentDiagnostics } from "./agent-diagnostics.ts";
import { isUniqueViolation } from "../shared/db-errors.ts";
import { newId } from "../shared/ids.ts";

// The claim protocol of warm pools (issue 33; docs/developers/warm-pools.md),
// all of it in Postgres so that it survives any controller or API restart:
//
//   waiting --claim(run)--> claimed --the pod takes its assignment--> assigned
//      \                      \
//       retired (idle, gone)   lost (the pod went away before it took it)
//
// Every step is one conditional UPDATE on the row's state, so two claimers
// never get the same pod (only a waiting row takes a run), a run never gets
// two pods (run_id is unique) and an assignment is handed out once (only a
// claimed row gives it, and giving it erases it). A pod's credential opens
// its own row and nothing else: no run, repository or commit is named by it.

export type PoolPodState = "waiting" | "claimed" | "assigned" | "retired" | "lost";
export type PoolPodRow = Selectable<PoolPodsTable>;

/** What a claimed pod is told to do: everything a cold run's pod gets from its spec and Secret. */
export interface PoolAssignment {
  run_id: string;
  commit: string;
  /** The run's repository on codeplane's git endpoint. */
  git_url: string;
  /** The run's own checkout token: one repository, read-only, until the run's deadline (revoked once it starts). */
  checkout_token: string;
  command: string[];
  /** The run's variables (the account's and repository's, decrypted). */
  env: Record<string, string>;
  /** The cached environment to restore before the command, or null for none. */
  environment: { archive_url: string; warnings: string[] } | null;
  /** Where the runner sends the run's outputs, with the run's output token; null: none collected. */
  outputs: { url: string; token: string; paths: string[]; collect_seconds: number } | null;
  timeout_seconds: number;
}

export type ProgressStep = "checked_out" | "environment_ready" | "started" | "ended";
export const PROGRESS_STEPS: readonly ProgressStep[] = ["checked_out", "environment_ready", "started", "ended"];

const PREFIX = "cpw_";
const CREDENTIAL = /^cpw_[A-Za-z0-9_-]{43}$/;
const hash = (credential: string) => createHash("sha256").update(credential).digest("hex");
const aad = (runId: string) => `pool-assignment:${runId}`;

/** Claims made in this process wake the pods' long polls at once; others are seen at the next look. */
const claims = new EventEmitter();
claims.setMaxListeners(0);

/** Waits until a claim for the pool pod is made in this process, or ms pass; resolves either way. */
export function claimMade(poolPodId: string, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      claims.off(poolPodId, done);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    claims.on(poolPodId, done);
    signal?.addEventListener("abort", done, { once: true });
  });
}

/** Records a new pool pod (before its Job is created) and returns its credential: the only time it exists in clear. */
export async function registerPoolPod(
  db: Db,
  p: { pool: string; namespace: string; jobName: string; id?: string },
): Promise<{ id: string; credential: string }> {
  const id = p.id ?? newId();
  const credential = PREFIX + randomBytes(32).toString("base64url");
  await db
    .insertInto("pool_pods")
    .values({ id, pool: p.pool, namespace: p.namespace, job_name: p.jobName, credential_hash: hash(credential) })
    .execute();
  return { id, credential };
}

/** The pod a run claimed, whatever became of it since; null when the run never claimed one. */
export async function claimOf(db: Db, runId: string): Promise<PoolPodRow | null> {
  return (await db.selectFrom("pool_pods").selectAll().where("run_id", "=", runId).executeTakeFirst()) ?? null;
}

/**
 * Claims the pool's oldest waiting pod (ready ones first) for the run, with its sealed assignment,
 * in one statement; null when the pool has none waiting. A run that has claimed before gets its
 * own claim back (a controller that restarted after claiming), never a second pod.
 */
export async function claimPoolPod(db: Db, box: SecretBox, pool: string, assignment: PoolAssignment): Promise<PoolPodRow | null> {
  const earlier = await claimOf(db, assignment.run_id);
  if (earlier) return earlier;
  const sealed = box.seal(JSON.stringify(assignment), aad(assignment.run_id));
  let row: PoolPodRow | undefined;
  try {
    row = await db
      .updateTable("pool_pods")
      .set({
        state: "claimed",
        run_id: assignment.run_id,
        claimed_at: sql<Date>`now()`,
        assignment_key_id: sealed.keyId,
        assignment_ciphertext: sealed.data,
      })
      .where(
        "id",
        "=",
        db
          .selectFrom("pool_pods")
          .select("id")
          .where("pool", "=", pool)
          .where("state", "=", "waiting")
          .orderBy(sql`ready_at is null`)
          .orderBy("created_at")
          .limit(1)
          .forUpdate()
          .skipLocked(),
      )
      .where("state", "=", "waiting")
      .returningAll()
      .executeTakeFirst();
  } catch (err) {
    // The same run claimed meanwhile by another reconcile: that claim is the run's.
    if (isUniqueViolation(err)) return claimOf(db, assignment.run_id);
    throw err;
  }
  if (row) claims.emit(row.id);
  return row ?? null;
}

export type TakeResult = { state: "assigned"; poolPodId: string; assignment: PoolAssignment } | { state: "waiting"; poolPodId: string } | { state: "gone" };

/**
 * What a pod presenting its credential is told: its assignment (once: handing it out moves the row
 * to assigned and erases it), to keep waiting, or that it will never get one (retired, lost, or its
 * run ended or was deleted before it asked). null: the credential opens nothing.
 */
export async function takeAssignment(db: Db, box: SecretBox, credential: string): Promise<TakeResult | null> {
  if (!CREDENTIAL.test(credential)) return null;
  return db.transaction().execute(async (tx) => {
    const row = await tx
      .updateTable("pool_pods")
      .set({ ready_at: sql<Date>`coalesce(ready_at, now())` })
      .where("credential_hash", "=", hash(credential))
      .returningAll()
      .executeTakeFirst();
    if (!row) return null;
    if (row.state === "waiting") return { state: "waiting", poolPodId: row.id };
    if (row.state !== "claimed" || !row.run_id || !row.assignment_ciphertext || !row.assignment_key_id) return { state: "gone" };
    const run = await tx.selectFrom("runs").select(["status", "deleted_at"]).where("id", "=", row.run_id).executeTakeFirst();
    const live = run && !run.deleted_at && !["completed", "failed", "cancelled"].includes(run.status);
    const taken = await tx
      .updateTable("pool_pods")
      .set(
        live
          ? { state: "assigned", assigned_at: sql<Date>`now()`, assignment_key_id: null, assignment_ciphertext: null }
          : { state: "lost", ended_at: sql<Date>`now()`, assignment_key_id: null, assignment_ciphertext: null },
      )
      .where("id", "=", row.id)
      .where("state", "=", "claimed")
      .returning("id")
      .executeTakeFirst();
    if (!taken || !live) return { state: "gone" };
    const assignment = JSON.parse(box.open({ keyId: row.assignment_key_id, data: row.assignment_ciphertext }, aad(row.run_id))) as PoolAssignment;
    return { state: "assigned", poolPodId: row.id, assignment };
  });
}

/**
 * Records a step an assigned pod reports (the first report of each counts), and the agent's
 * diagnostics when the report carries them (the first counts too); false when the credential
 * opens no assigned pod.
 */
export async function recordProgress(db: Db, credential: string, step: ProgressStep, diagnostics?: AgentDiagnostics | null): Promise<boolean> {
  if (!CREDENTIAL.test(credential)) return false;
  const column = `${step}_at`;
  const row = await db
    .updateTable("pool_pods")
    .set({
      [column]: sql<Date>`coalesce(${sql.ref(column)}, now())`,
      ...(diagnostics && { diagnostics: sql<string>`coalesce(diagnostics, ${JSON.stringify(diagnostics)}::jsonb)` }),
    })
    .where("credential_hash", "=", hash(credential))
    .where("state", "=", "assigned")
    .returning("id")
    .executeTakeFirst();
  return Boolean(row);
}

/** Retires a waiting pod (idle too long, or its Job is gone); false when it was claimed meanwhile, so it is the run's. */
export async function retireWaiting(db: Db, id: string): Promise<boolean> {
  const row = await db
    .updateTable("pool_pods")
    .set({ state: "retired", ended_at: sql<Date>`now()` })
    .where("id", "=", id)
    .where("state", "=", "waiting")
    .returning("id")
    .executeTakeFirst();
  return Boolean(row);
}

/**
 * The run's pod went away before it took its assignment: the claim ends (the assignment is erased,
 * so no pod ever runs it). false when the pod had already taken it: the run may have run, and the
 * caller must not start it again.
 */
export async function loseClaim(db: Db, runId: string): Promise<boolean> {
  const row = await db
    .updateTable("pool_pods")
    .set({ state: "lost", ended_at: sql<Date>`now()`, assignment_key_id: null, assignment_ciphertext: null })
    .where("run_id", "=", runId)
    .where("state", "=", "claimed")
    .returning("id")
    .executeTakeFirst();
  return Boolean(row);
}

/** The rows of pods not ended yet (waiting, claimed, assigned) in a namespace: what the pool manager reconciles the cluster with. */
export async function livePoolPods(db: Db, namespace: string): Promise<PoolPodRow[]> {
  return db
    .selectFrom("pool_pods")
    .selectAll()
    .where("namespace", "=", namespace)
    .where("state", "in", ["waiting", "claimed", "assigned"])
    .where("ended_at", "is", null)
    .execute();
}

/** Marks a claimed or assigned pod ended (its Job finished or is gone). */
export async function endPoolPod(db: Db, id: string): Promise<void> {
  await db
    .updateTable("pool_pods")
    .set({ ended_at: sql<Date>`coalesce(ended_at, now())`, assignment_key_id: null, assignment_ciphertext: null })
    .where("id", "=", id)
    .execute();
}

/** Forgets rows that ended long ago (the run keeps its own record of having been warm). */
export async function pruneEndedPoolPods(db: Db, before: Date): Promise<void> {
  await db.deleteFrom("pool_pods").where("ended_at", "<", before).where("state", "in", ["retired", "lost", "assigned"]).execute();
}

/** The pods' side of the protocol, as the internal endpoint serves it. */
export class PoolService {
  readonly #box: SecretBox;

  constructor(box: SecretBox) {
    this.#box = box;
  }

  /**
   * A pod's long poll: its assignment as soon as it has one, or "waiting" after waitMs. Looks at the
   * row every lookMs, and at once when this process makes the claim.
   */
  async take(db: Db, credential: string, waitMs: number, signal?: AbortSignal, lookMs = 250): Promise<TakeResult | null> {
    const until = Date.now() + waitMs;
    for (;;) {
      const r = await takeAssignment(db, this.#box, credential);
      if (!r || r.state !== "waiting") return r;
      const left = until - Date.now();
      if (left <= 0 || signal?.aborted) return r;
      await claimMade(r.poolPodId, Math.min(lookMs, left), signal);
    }
  }

  progress(db: Db, credential: string, step: ProgressStep, diagnostics?: AgentDiagnostics | null): Promise<boolean> {
    return recordProgress(db, credential, step, diagnostics);
  }
}

/** The image of a ready cached environment with this key (any account's: the key is the hash of the image and its manifests). */
export async function readyEnvironmentImage(db: Db, key: string): Promise<string | null> {
  const row = await db.selectFrom("environments").select("image").where("key", "=", key).where("status", "=", "ready").limit(1).executeTakeFirst();
  return row?.image ?? null;
}
