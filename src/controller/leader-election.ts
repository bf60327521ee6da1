import { V1MicroTime, type CoordinationV1Api, type V1Lease } from "@kubernetes/client-node";
import { isAlreadyExists, isConflict, isNotFound } from "../k8s/client.ts";
import type { Logger } from "../logger.ts";

// Only one replica reconciles at a time: the holder of a coordination.k8s.io
// Lease, as client-go's leaderelection does it. Writes use the Lease's
// resourceVersion, so two candidates can never both win a round.

export interface LeaderElectionOptions {
  api: CoordinationV1Api;
  namespace: string;
  name: string;
  identity: string;
  /**
   * How long a Lease holds without renewal: the longest a crashed leader
   * (SIGKILL, a frozen process, a lost node) delays the next one. The holder
   * renews every fifth of it and gives up leading after 70% of it without a
   * renewal, so it has stopped before anyone else may start; the others look
   * every tenth of it (at least once a second). Default 10 s: a successor
   * within 11 s.
   */
  leaseSeconds?: number;
  logger: Logger;
  onStartedLeading: () => Promise<void>;
  onStoppedLeading: () => Promise<void>;
}

export class LeaderElector {
  readonly #o: Required<LeaderElectionOptions>;
  readonly #renewMs: number;
  readonly #renewDeadlineMs: number;
  readonly #retryMs: number;
  #leading = false;
  #stopped = false;
  #timer: NodeJS.Timeout | undefined;
  #lastRenew = 0;
  /** The latest round: stop() waits for it, since it may just have won. */
  #round: Promise<void> = Promise.resolve();
  /** Whether the last round that got an answer won the Lease: held, whether or not leading (leading implies it). */
  #holding = false;

  constructor(opts: LeaderElectionOptions) {
    this.#o = { leaseSeconds: 10, ...opts };
    const leaseMs = this.#o.leaseSeconds * 1000;
    this.#renewMs = leaseMs / 5;
    this.#renewDeadlineMs = leaseMs * 0.7;
    this.#retryMs = Math.min(1000, leaseMs / 10);
  }

  get isLeader(): boolean {
    return this.#leading;
  }

  start(): void {
    this.#runRound();
  }

  /**
   * Stops leading (onStoppedLeading) and releases the Lease. A round under way
   * finishes first: one that won while stop was called (a renewal, or an
   * acquisition) would otherwise start leading, and so a controller, after its
   * process had stopped the one it knew of, running beside the successor the
   * release let in. Nothing starts once stop is called.
   */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#round;
    if (this.#leading) {
      this.#leading = false;
      await this.#o.onStoppedLeading();
    }
    // Also when a round won after stop was called and so never led: the Lease is held all the same.
    if (this.#holding) await this.#release().catch((err: unknown) => this.#o.logger.warn({ err }, "could not release the lease"));
  }

  #runRound(): void {
    this.#round = this.#tick();
  }

  async #tick(): Promise<void> {
    if (this.#stopped) return;
    try {
      const won = await this.#tryAcquireOrRenew();
      this.#holding = won;
      if (won) this.#lastRenew = Date.now();
      if (won && !this.#leading && !this.#stopped) {
        this.#leading = true;
        this.#o.logger.info({ lease: this.#o.name, identity: this.#o.identity }, "became the leader");
        await this.#o.onStartedLeading();
      } else if (!won && this.#leading) {
        await this.#lose("another replica holds the lease");
      }
    } catch (err) {
      this.#o.logger.warn({ err: err instanceof Error ? err.message : String(err) }, "leader election round failed");
      if (this.#leading && Date.now() - this.#lastRenew > this.#renewDeadlineMs) await this.#lose("could not renew the lease in time");
    }
    if (this.#stopped) return;
    // A leader that cannot renew tries again soon enough to lose leadership on time, not a whole renew period late.
    const delay = this.#leading ? Math.min(this.#renewMs, Math.max(100, this.#renewDeadlineMs - (Date.now() - this.#lastRenew))) : this.#retryMs;
    this.#timer = setTimeout(() => this.#runRound(), delay);
    this.#timer.unref();
  }

  async #lose(why: string): Promise<void> {
    this.#leading = false;
    this.#o.logger.warn({ why }, "lost leadership");
    await this.#o.onStoppedLeading();
  }

  async #tryAcquireOrRenew(): Promise<boolean> {
    const { api, namespace, name, identity, leaseSeconds } = this.#o;
    const now = new Date();
    let lease: V1Lease;
    try {
      lease = await api.readNamespacedLease({ name, namespace });
    } catch (err) {
      if (!isNotFound(err)) throw err;
      try {
        await api.createNamespacedLease({
          namespace,
          body: {
            metadata: { name, namespace },
            spec: {
              holderIdentity: identity,
              leaseDurationSeconds: leaseSeconds,
              acquireTime: new V1MicroTime(now),
              renewTime: new V1MicroTime(now),
              leaseTransitions: 0,
            },
          },
        });
        return true;
      } catch (e) {
        if (isAlreadyExists(e)) return false;
        throw e;
      }
    }
    const spec = lease.spec ?? {};
    const holder = spec.holderIdentity ?? "";
    const renewed = spec.renewTime ? new Date(spec.renewTime).getTime() : 0;
    const expired = renewed + (spec.leaseDurationSeconds ?? leaseSeconds) * 1000 < now.getTime();
    if (holder && holder !== identity && !expired) return false;
    const taking = holder !== identity;
    try {
      await api.replaceNamespacedLease({
        name,
        namespace,
        body: {
          ...lease,
          // Times are rebuilt as MicroTime: the API server refuses millisecond precision here.
          spec: {
            holderIdentity: identity,
            leaseDurationSeconds: leaseSeconds,
            acquireTime: new V1MicroTime(taking || !spec.acquireTime ? now : new Date(spec.acquireTime)),
            renewTime: new V1MicroTime(now),
            leaseTransitions: (spec.leaseTransitions ?? 0) + (taking ? 1 : 0),
          },
        },
      });
      return true;
    } catch (err) {
      if (isConflict(err)) return false;
      throw err;
    }
  }

  /** Lets a successor take over at once instead of waiting out the lease. */
  async #release(): Promise<void> {
    const { api, namespace, name, identity } = this.#o;
    let lease: V1Lease;
    try {
      lease = await api.readNamespacedLease({ name, namespace });
    } catch (err) {
      if (isNotFound(err)) return;
      throw err;
    }
    if (lease.spec?.holderIdentity !== identity) return;
    await api.replaceNamespacedLease({
      name,
      namespace,
      body: {
        ...lease,
        spec: {
          holderIdentity: "",
          leaseDurationSeconds: lease.spec.leaseDurationSeconds ?? 1,
          renewTime: new V1MicroTime(0),
          leaseTransitions: lease.spec.leaseTransitions ?? 0,
        },
      },
    });
  }
}
