import type { V1Job } from "@kubernetes/client-node";
import type { Db } from "../db/database.ts";
import type { SecretBox } from "../domain/crypto/secret-box.ts";
import {
  claimOf,
  claimPoolPod,
  endPoolPod,
  livePoolPods,
  loseClaim,
  pruneEndedPoolPods,
  registerPoolPod,
  retireWaiting,
  type PoolAssignment,
  type PoolPodRow,
} from "../domain/pools/pool-pods.ts";
import { newId } from "../domain/shared/ids.ts";
import { Unreconcilable } from "../domain/workloads/unreconcilable.ts";
import type { PoolCluster, RunOwner } from "../k8s/pool-actions.ts";
import { buildPoolJob, buildPoolSecret, poolJobName } from "../k8s/pool-job.ts";
import type { Logger } from "../logger.ts";
import type { ComputeTypes } from "../resources/compute-types.ts";
import { POOL_POD_LABEL, poolFor, type WarmPool } from "../resources/warm-pools.ts";
import type { WarmProgress } from "./run-observation.ts";
import { presetFor } from "./workload.ts";

// Warm pools (issue 33; docs/developers/warm-pools.md): the controller keeps
// each operator-enabled pool at its size of waiting pods, and hands one to a
// run of the pool's environment and compute type when it is created. The
// claim is a row in Postgres (src/domain/pools/pool-pods.ts), so it survives
// a restart; the pod takes its assignment from codeplane's internal endpoint.
// With no waiting pod the run starts the ordinary way.

/** How often the pools are looked at without a claim to prompt it (refills, idle pods, lost Jobs). */
export const POOL_TICK_MS = 5000;
/** Ended rows are forgotten this long after they ended. */
const PRUNE_AFTER_MS = 24 * 3600 * 1000;

export interface WarmPoolsDeps {
  db: Db;
  box: SecretBox;
  cluster: PoolCluster;
  namespace: string;
  pools: readonly WarmPool[];
  computeTypes: ComputeTypes;
  images: { codeplane: string; pullPolicy: "Always" | "IfNotPresent" | "Never"; pullSecrets?: readonly string[] };
  internalUrl: string | null;
  jobTtlSeconds: number;
  outputCollectSeconds?: number;
  /** The image of a ready environment with this key, or null when none is ready yet (the pool waits for it). */
  environmentImage(key: string): Promise<string | null>;
  logger: Logger;
  now?: () => Date;
}

/** A run's claim of a pool pod, adopted: the Job the reconciler follows from now on. */
export interface WarmClaim {
  jobName: string;
  pool: string;
  poolPodId: string;
}

/** What the run side needs to build an assignment, once a pod may be claimed. */
export interface ClaimRequest {
  runId: string;
  environmentKey: string | undefined;
  computeType: string;
  timeoutSeconds: number;
  owner: RunOwner;
  labels: Record<string, string>;
  /** Builds the assignment (mints the tokens, decrypts the variables): called only when the pool has a waiting pod. */
  assignment(): Promise<PoolAssignment>;
}

export class WarmPools {
  readonly #d: WarmPoolsDeps;
  #timer: NodeJS.Timeout | null = null;
  #running: Promise<void> | null = null;
  #again = false;
  #stopped = true;
  /** Per pool, the last reason it could not be filled (logged once per change). */
  readonly #blocked = new Map<string, string>();

  constructor(deps: WarmPoolsDeps) {
    this.#d = deps;
  }

  get enabled(): boolean {
    return this.#d.pools.length > 0;
  }

  start(): void {
    if (!this.enabled) return;
    this.#stopped = false;
    this.kick();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    await this.#running?.catch(() => undefined);
  }

  /** Looks at the pools now (a claim took a pod: refill at once), then every POOL_TICK_MS. */
  kick(): void {
    if (this.#stopped) return;
    if (this.#running) {
      this.#again = true;
      return;
    }
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    this.#running = this.tick()
      .catch((err: unknown) => this.#d.logger.warn({ err: err instanceof Error ? err.message : String(err) }, "warm pools: could not refill"))
      .finally(() => {
        this.#running = null;
        if (this.#stopped) return;
        if (this.#again) {
          this.#again = false;
          this.kick();
          return;
        }
        this.#timer = setTimeout(() => this.kick(), POOL_TICK_MS);
        this.#timer.unref();
      });
  }

  /**
   * Claims a waiting pod of the run's pool for it and adopts its Job; null when the run has no pool,
   * its pool has no waiting pod, or its earlier claim's pod went away before taking its assignment
   * (then nothing ran, and the run starts the ordinary way). Throws Unreconcilable when the pod went
   * away after taking it: the command may have run, and a run never runs twice.
   */
  async claim(r: ClaimRequest): Promise<WarmClaim | null> {
    const { db, box, namespace } = this.#d;
    let row = await claimOf(db, r.runId);
    if (!row) {
      const pool = poolFor(this.#d.pools, r.environmentKey, r.computeType);
      if (!pool) return null;
      if (!(await this.#hasWaiting(pool.name))) return null;
      row = await claimPoolPod(db, box, pool.name, await r.assignment());
      if (!row) return null;
      this.#d.logger.info({ run: r.runId, pool: pool.name, job: row.job_name }, "warm pools: a run claimed a waiting pod");
      this.kick();
    }
    if (row.state === "lost" || row.state === "retired") return null;
    const job = await this.#runJob(row, r);
    if (job) return job;
    // The pod's Job is gone. Not taken yet: end the claim (atomically, so the pod can never take it) and start cold.
    if (await loseClaim(db, r.runId)) {
      this.#d.logger.warn({ run: r.runId, job: row.job_name }, "warm pools: the claimed pod went away before taking its run; starting it the ordinary way");
      return null;
    }
    throw new Unreconcilable(
      "WarmPodLost",
      `the warm pod (${namespace}/${row.job_name}) went away after it had received the run: it is not started again, since its command may have run`,
      { expected: true },
    );
  }

  /** The Job adopted for the run (adopting it again is harmless); null when it is gone. */
  async #runJob(row: PoolPodRow, r: ClaimRequest): Promise<WarmClaim | null> {
    // The run's deadline counts from now, on a Job that started earlier: its deadline is moved to match.
    const job = (await this.#d.cluster.listPoolJobs(this.#d.namespace)).find((j) => j.metadata?.name === row.job_name);
    if (!job) return null;
    const started = job.status?.startTime ? new Date(job.status.startTime).getTime() : this.#now().getTime();
    const since = Math.max(0, Math.ceil((this.#now().getTime() - started) / 1000));
    const deadline = since + r.timeoutSeconds + (this.#d.outputCollectSeconds ?? 0);
    const adopted = await this.#d.cluster.adopt(this.#d.namespace, row.job_name, row.id, r.owner, r.labels, deadline);
    return adopted ? { jobName: row.job_name, pool: row.pool, poolPodId: row.id } : null;
  }

  /** The claim's progress as its pod reported it, for the run's status; null when the run claimed none. */
  async progress(runId: string): Promise<(WarmProgress & { state: PoolPodRow["state"] }) | null> {
    const row = await claimOf(this.#d.db, runId);
    if (!row) return null;
    return {
      pool: row.pool,
      state: row.state,
      claimedAt: row.claimed_at,
      checkedOutAt: row.checked_out_at,
      environmentReadyAt: row.environment_ready_at,
      startedAt: row.started_at,
    };
  }

  async #hasWaiting(pool: string): Promise<boolean> {
    const row = await this.#d.db
      .selectFrom("pool_pods")
      .select("id")
      .where("pool", "=", pool)
      .where("state", "=", "waiting")
      .where("namespace", "=", this.#d.namespace)
      .limit(1)
      .executeTakeFirst();
    return Boolean(row);
  }

  /** One look at every pool: retire idle and lost pods, delete Jobs no row claims, and start what is missing. */
  async tick(): Promise<void> {
    const { db, cluster, namespace } = this.#d;
    const now = this.#now();
    const [rows, jobs] = await Promise.all([livePoolPods(db, namespace), cluster.listPoolJobs(namespace)]);
    const jobsByName = new Map(jobs.map((j) => [j.metadata!.name!, j]));
    const rowsById = new Map(rows.map((r) => [r.id, r]));
    const waiting = new Map<string, number>();
    for (const row of rows) {
      const job = jobsByName.get(row.job_name);
      const pool = this.#d.pools.find((p) => p.name === row.pool);
      if (row.state === "waiting") {
        const idle = pool ? now.getTime() - row.created_at.getTime() > pool.idle_seconds * 1000 : true;
        // Just registered: its Job is being created (a row a little older with no Job lost it).
        const young = now.getTime() - row.created_at.getTime() < 30_000;
        if (!pool || idle || finished(job) || (!job && !young)) {
          if (await retireWaiting(db, row.id)) {
            if (job) await cluster.deleteJob(namespace, row.job_name);
          }
          continue;
        }
        waiting.set(row.pool, (waiting.get(row.pool) ?? 0) + 1);
      } else if (!job || finished(job)) {
        // Claimed or assigned: the run's now; its row ends with its Job.
        await endPoolPod(db, row.id);
      }
    }
    // Pool Jobs no live row knows (a crash between the row and the Job, a retired pod), not yet the run's: deleted.
    for (const job of jobs) {
      const id = job.metadata?.labels?.[POOL_POD_LABEL];
      const owned = (job.metadata?.ownerReferences ?? []).length > 0;
      if (!owned && (!id || !rowsById.has(id))) {
        await cluster.deleteJob(namespace, job.metadata!.name!);
      }
    }
    for (const pool of this.#d.pools) {
      const missing = pool.size - (waiting.get(pool.name) ?? 0);
      if (missing > 0) await this.#fill(pool, missing);
    }
    await pruneEndedPoolPods(db, new Date(now.getTime() - PRUNE_AFTER_MS));
  }

  async #fill(pool: WarmPool, missing: number): Promise<void> {
    const { db, cluster, namespace } = this.#d;
    const blocked = (why: string) => {
      if (this.#blocked.get(pool.name) !== why) this.#d.logger.warn({ pool: pool.name }, `warm pools: cannot fill the pool: ${why}`);
      this.#blocked.set(pool.name, why);
    };
    if (!this.#d.internalUrl) return blocked("CODEPLANE_INTERNAL_URL is not set, so its pods could not ask for work");
    const image = await this.#d.environmentImage(pool.environment);
    if (!image) return blocked(`no ready environment has the key ${pool.environment} yet (it is filled once one is built)`);
    const compute = presetFor(this.#d.computeTypes, pool.compute_type);
    this.#blocked.delete(pool.name);
    for (let i = 0; i < missing; i++) {
      const id = newId();
      const jobName = poolJobName(pool.name, id);
      const { credential } = await registerPoolPod(db, { id, pool: pool.name, namespace, jobName });
      const input = {
        pool: pool.name,
        poolPodId: id,
        jobName,
        namespace,
        image,
        images: this.#d.images,
        imagePullSecrets: this.#d.images.pullSecrets,
        compute,
        internalUrl: this.#d.internalUrl,
        idleSeconds: pool.idle_seconds,
        ttlSecondsAfterFinished: this.#d.jobTtlSeconds,
        ...(this.#d.outputCollectSeconds !== undefined && { outputCollectSeconds: this.#d.outputCollectSeconds }),
      };
      try {
        await cluster.createPoolJob(namespace, buildPoolJob(input), (uid) => buildPoolSecret(input, uid, credential));
      } catch (err) {
        await retireWaiting(db, id);
        throw err;
      }
    }
    this.#d.logger.info({ pool: pool.name, started: missing }, "warm pools: started waiting pods");
  }

  #now(): Date {
    return (this.#d.now ?? (() => new Date()))();
  }
}

function finished(job: V1Job | undefined): boolean {
  return (job?.status?.conditions ?? []).some((c) => c.status === "True" && (c.type === "Complete" || c.type === "Failed"));
}
