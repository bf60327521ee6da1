import { repeatEvery } from "../shared/periodic.ts";
import type { Readable } from "node:stream";
import type { Db } from "../../db/database.ts";
import type { EnvironmentRow, RunEnvironment } from "../../db/schema.ts";
import type { Catalog } from "../../resources/environment-catalog.ts";
import type { RunEnvironmentSpec } from "../../resources/run.ts";
import type { Logger } from "../../logger.ts";
import { checkoutGrantFor } from "../checkout/checkout-tokens.ts";
import { conflict, DomainError, DomainValidationError, notFound } from "../errors.ts";
import type { Page, PageRequest } from "../shared/pagination.ts";
import { toPage } from "../shared/pagination.ts";
import {
  archiveForRun,
  archiveObjectKey,
  deleteEnvironmentRow,
  deletePurgedRow,
  dropSpentPins,
  environmentForUpload,
  findEnvironment,
  hideUnpinned,
  isPurgeable,
  leastRecentlyUsed,
  listEnvironments,
  markReady,
  purgeableEnvironments,
  reserveEnvironment,
  saveBuildLog,
  storedBytes,
  toEnvironment,
  touchEnvironment,
} from "./environment-rows.ts";
import type { Environment, RunSetupLog } from "./environments.schemas.ts";
import { resolveEnvironment, type AnalyzedEnvironment, type ImagePolicy } from "./resolve.ts";

// Environments as a service: what a run of a commit gets (an image, and the
// key of its installed dependencies), the account's cache of them, and the
// two internal doors pods use: a build Job stores its archive with a token
// only it holds, and a run's restore container fetches its own run's archive
// with its checkout token. Neither door takes a storage credential into a pod.

/** Where archives live (src/storage's ObjectStore satisfies it). */
export interface ArchiveStore {
  put(key: string, body: Readable, opts: { maxBytes: number; contentType?: string }): Promise<{ size: number; sha256: string }>;
  get(key: string): Promise<{ body: Readable; size: number } | null>;
  delete(key: string): Promise<void>;
}

export interface EnvironmentServiceDeps {
  store: ArchiveStore;
  catalog: Catalog;
  /** Registry prefixes whose images repositories may declare (CODEPLANE_ENVIRONMENT_ALLOWED_REGISTRIES); absent: none. */
  allowedRegistries?: readonly string[];
  /** Largest archive a build may store (CODEPLANE_ENVIRONMENT_MAX_BYTES). */
  maxArchiveBytes: number;
  /** Bound on all stored archives together; least recently used go first (CODEPLANE_ENVIRONMENT_CACHE_MAX_BYTES). */
  maxCacheBytes: number;
  logger: Logger;
}

/** What a new run is given: the image, and the environment to restore when there is one. */
export interface RunEnvironmentPlan {
  image: string;
  environment: RunEnvironmentSpec | undefined;
  /** What the run row records. */
  record: RunEnvironment | null;
}

/** Eviction rounds at most per pass (each drops up to 16): a store far over its bound shrinks over several passes. */
const MAX_EVICTION_ROUNDS = 64;
/** How often each API process purges hidden environments (their archives, then rows) when no build ends to do it. */
export const ENVIRONMENT_PURGE_INTERVAL_MS = 10 * 60 * 1000;

export class EnvironmentService {
  readonly #d: EnvironmentServiceDeps;

  constructor(deps: EnvironmentServiceDeps) {
    this.#d = deps;
  }

  get catalog(): Catalog {
    return this.#d.catalog;
  }

  get imagePolicy(): ImagePolicy {
    return { catalog: this.#d.catalog, allowedRegistries: this.#d.allowedRegistries ?? [] };
  }

  async list(db: Db, accountId: string, page: PageRequest): Promise<Page<Environment>> {
    return toPage(await listEnvironments(db, accountId, page), page.limit, toEnvironment);
  }

  async get(db: Db, accountId: string, key: string): Promise<Environment> {
    const row = await findEnvironment(db, accountId, key);
    if (!row) throw notFound("Environment");
    return toEnvironment(row, true);
  }

  /** Drops a cached environment: the next run of its key builds it again. A build in progress is not interrupted. */
  async delete(db: Db, accountId: string, key: string): Promise<void> {
    const row = await findEnvironment(db, accountId, key);
    if (!row) throw notFound("Environment");
    // A build that was never started (its run could not be created) has nothing to wait for.
    if (row.status === "building" && row.started_at !== null) throw conflict("The environment is being built; delete it once the build has ended");
    // Hidden at once; its archive goes now unless a run already given it has still to restore it (then the purge takes it later).
    await deleteEnvironmentRow(db, row.id);
    await this.#purgeOne(db, row);
  }

  /**
   * What a run of a commit gets on a compute preset: refused (422) when no
   * image of the catalog can provide what the analysis found, refused (409)
   * when the environment of this key failed to build, otherwise the image and
   * the environment (its row reserved, so concurrent runs share one build).
   */
  async planRun(
    db: Db,
    run: { accountId: string; repositoryId: string; commitHash: string; computeType: string },
    analyzed: AnalyzedEnvironment | null,
    defaultImage: string,
  ): Promise<RunEnvironmentPlan> {
    if (!analyzed) return { image: defaultImage, environment: undefined, record: null };
    const resolved = resolveEnvironment(analyzed, this.imagePolicy, run.computeType);
    if (!resolved.ok) {
      throw new DomainValidationError([
        { loc: ["body", "compute_type"], msg: `Value error, this commit's environment cannot be provided: ${resolved.reason}`, type: "value_error" },
      ]);
    }
    const { image, key, definition } = resolved;
    if (key === null) return { image, environment: undefined, record: { key: null, image, warnings: definition.warnings } };
    const { row } = await reserveEnvironment(db, {
      accountId: run.accountId,
      repositoryId: run.repositoryId,
      commitHash: run.commitHash,
      key,
      image,
      definition,
    });
    if (row.status === "failed") {
      throw conflict(
        `This commit's environment failed to build (${(row.error ?? "").split("\n")[0]}); see GET /v1/environments/${key} for its log, and DELETE it to build it again`,
      );
    }
    return {
      image,
      environment: {
        key,
        image,
        steps: definition.steps.map((s) => ({ name: s.name, run: s.run })),
        cachePaths: definition.cache_paths,
        warnings: definition.warnings,
      },
      record: { key, image, warnings: definition.warnings },
    };
  }

  /** The install's output of a run's environment (GET /v1/runs/{id}/logs/setup). */
  async setupLog(db: Db, accountId: string, runId: string): Promise<RunSetupLog> {
    const run = await db
      .selectFrom("runs")
      .select("environment")
      .where("id", "=", runId)
      .where("account_id", "=", accountId)
      .where("deleted_at", "is", null)
      .executeTakeFirst();
    if (!run) throw notFound("Run");
    const key = run.environment?.key ?? null;
    const row = key ? await findEnvironment(db, accountId, key) : undefined;
    return { run_id: runId, environment_key: key, status: row?.status ?? null, content: row?.log ?? "" };
  }

  /** Whether an upload token opens this building environment (checked before a body is read). */
  async canUpload(db: Db, environmentId: string, token: string): Promise<boolean> {
    return (await environmentForUpload(db, environmentId, token)) !== undefined;
  }

  /** A build's install log, handed in before its archive. Unknown token or environment: false (the caller answers 401). */
  async receiveLog(db: Db, environmentId: string, token: string, text: string): Promise<boolean> {
    const row = await environmentForUpload(db, environmentId, token);
    if (!row) return false;
    await saveBuildLog(db, row.id, text.replaceAll("\u0000", ""));
    return true;
  }

  /** A build Job's upload: stored, then the environment is ready. Unknown token or environment: not found (the caller answers 401). */
  async receiveArchive(db: Db, environmentId: string, token: string, body: Readable): Promise<{ size: number } | null> {
    const row = await environmentForUpload(db, environmentId, token);
    if (!row) return null;
    let stored;
    try {
      stored = await this.#d.store.put(archiveObjectKey(row), body, { maxBytes: this.#d.maxArchiveBytes, contentType: "application/gzip" });
    } catch (err) {
      // The store's ObjectTooLargeError (src/storage), told by name: the domain does not depend on a store.
      if (err instanceof Error && err.name === "ObjectTooLargeError") {
        throw new DomainError(
          "payload_too_large",
          `The environment's archive is larger than ${this.#d.maxArchiveBytes} bytes (CODEPLANE_ENVIRONMENT_MAX_BYTES)`,
        );
      }
      throw err;
    }
    if (!(await markReady(db, row.id, stored))) {
      // Deleted or ended meanwhile: the object belongs to nothing.
      await this.#d.store.delete(archiveObjectKey(row)).catch(() => undefined);
      return null;
    }
    this.#d.logger.info({ environment: row.key, account: row.account_id, bytes: stored.size }, "environment stored");
    await this.evict(db, row.id);
    return { size: stored.size };
  }

  /**
   * A run's restore: its checkout token opens its own run's environment and
   * nothing else (another key, account or repository: not found).
   */
  async openArchive(db: Db, token: string, key: string): Promise<{ body: Readable; size: number } | "unauthenticated" | null> {
    const grant = await checkoutGrantFor(db, token);
    if (!grant) return "unauthenticated";
    if (grant.workloadKind !== "run") return null;
    const run = await db
      .selectFrom("runs")
      .select(["environment", "account_id"])
      .where("id", "=", grant.workloadId)
      .where("account_id", "=", grant.accountId)
      .executeTakeFirst();
    if (run?.environment?.key !== key) return null;
    // The archive the run was promised when its Job was made, kept for it even if deleted or evicted since.
    const row = await archiveForRun(db, grant.accountId, grant.workloadId, key);
    if (row?.status !== "ready") return null;
    const object = await this.#d.store.get(archiveObjectKey(row));
    if (!object) {
      this.#d.logger.warn(
        { environment: key, account: grant.accountId, run: grant.workloadId },
        "a ready environment's archive is missing from the object store",
      );
      return null;
    }
    if (row.deleted_at === null) await touchEnvironment(db, row.id);
    return object;
  }

  /**
   * Keeps the stored archives within the bound: first the purge (hidden rows' archives nobody still
   * needs), then the least recently used ready environments that no run about to restore is pinned to
   * (never `keep`, the one just stored). Pinned archives count but stay: the bound can be exceeded by
   * them until their runs have restored.
   */
  async evict(db: Db, keep?: string): Promise<number> {
    await this.purge(db);
    let total = await storedBytes(db);
    let dropped = 0;
    for (let round = 0; total > this.#d.maxCacheBytes && round < MAX_EVICTION_ROUNDS; round++) {
      const victims = (await leastRecentlyUsed(db, 16)).filter((r) => r.id !== keep);
      if (victims.length === 0) break;
      for (const v of victims) {
        if (total <= this.#d.maxCacheBytes) break;
        // Pinned (or dropped) since the list was read: left alone.
        if (!(await hideUnpinned(db, v.id))) continue;
        await this.#purgeOne(db, v);
        total -= Number(v.size ?? 0);
        dropped++;
        this.#d.logger.info({ environment: v.key, account: v.account_id, bytes: Number(v.size ?? 0) }, "environment evicted (least recently used)");
      }
    }
    return dropped;
  }

  /**
   * Deletes what hidden (deleted or evicted) rows leave: each one's archive, then the row, once no
   * run that was given it has still to restore it; and pins of runs that are past their restore.
   * Run at every eviction pass and every ENVIRONMENT_PURGE_INTERVAL_MS by each API process
   * (idempotent: two replicas purging the same row both succeed). Returns the rows purged.
   */
  async purge(db: Db, limit = 1000): Promise<number> {
    await dropSpentPins(db, limit);
    let purged = 0;
    while (purged < limit) {
      const batch = await purgeableEnvironments(db, Math.min(100, limit - purged));
      for (const row of batch) await this.#purgeOne(db, row);
      purged += batch.length;
      if (batch.length < 100) break;
    }
    return purged;
  }

  /**
   * Purges every intervalMs until stopped (each API process; the first pass one interval after start),
   * so hidden environments' archives go even when no build ends to run an eviction pass.
   */
  startPurging(db: Db, intervalMs = ENVIRONMENT_PURGE_INTERVAL_MS): { stop(): Promise<void> } {
    return repeatEvery(intervalMs, () =>
      this.purge(db).then(
        (n) => void (n > 0 && this.#d.logger.info({ purged: n }, "purged deleted environments")),
        (err: unknown) => this.#d.logger.warn({ err }, "purging deleted environments failed; trying again at the next pass"),
      ),
    );
  }

  /** A hidden row's archive, then the row; nothing while a run is pinned to it (the row stays for the next purge). */
  async #purgeOne(db: Db, row: EnvironmentRow): Promise<void> {
    if (!(await isPurgeable(db, row.id))) return;
    // The object first: a row whose archive is already gone is purged again harmlessly, never the reverse.
    // Each row has its own object (archiveObjectKey names the row's id): no other row points at it.
    await this.#d.store.delete(archiveObjectKey(row));
    await deletePurgedRow(db, row.id);
  }
}
