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
  leaseSeconds?: number;
  renewSeconds?: number;
  logger: Logger;
  onStartedLeading: () => Promise<void>;
  onStoppedLeading: () => Promise<void>;
}

export class LeaderElector {
  readonly #o: Required<LeaderElectionOptions>;
  #leading = false;
  #stopped = false;
  #timer: NodeJS.Timeout | undefined;
  #lastRenew = 0;

  constructor(opts: LeaderElectionOptions) {
    this.#o = { leaseSeconds: 15, renewSeconds: 5, ...opts };
  }

  get isLeader(): boolean {
    return this.#leading;
  }

  start(): void {
    void this.#tick();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    if (this.#leading) {
      this.#leading = false;
      await this.#o.onStoppedLeading();
      await this.#release().catch((err: unknown) => this.#o.logger.warn({ err }, "could not release the lease"));
    }
  }

  async #tick(): Promise<void> {
    if (this.#stopped) return;
    try {
      const won = await this.#tryAcquireOrRenew();
      if (won) this.#lastRenew = Date.now();
      if (won && !this.#leading) {
        this.#leading = true;
        this.#o.logger.info({ lease: this.#o.name, identity: this.#o.identity }, "became the leader");
        await this.#o.onStartedLeading();
      } else if (!won && this.#leading) {
        await this.#lose("another replica holds the lease");
      }
    } catch (err) {
      this.#o.logger.warn({ err: err instanceof Error ? err.message : String(err) }, "leader election round failed");
      if (this.#leading && Date.now() - this.#lastRenew > this.#o.leaseSeconds * 1000) await this.#lose("could not renew the lease in time");
    }
    if (this.#stopped) return;
    this.#timer = setTimeout(() => void this.#tick(), (this.#leading ? this.#o.renewSeconds : Math.max(1, this.#o.renewSeconds / 2)) * 1000);
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
            spec: { holderIdentity: identity, leaseDurationSeconds: leaseSeconds, acquireTime: new V1MicroTime(now), renewTime: new V1MicroTime(now), leaseTransitions: 0 },
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
    const renewed = spec.renewTime ? new Date(spec.renewTime as unknown as string).getTime() : 0;
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
            acquireTime: new V1MicroTime(taking || !spec.acquireTime ? now : new Date(spec.acquireTime as unknown as string)),
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
    const lease = await api.readNamespacedLease({ name, namespace });
    if (lease.spec?.holderIdentity !== identity) return;
    await api.replaceNamespacedLease({ name, namespace, body: { ...lease, spec: { holderIdentity: "", leaseDurationSeconds: lease.spec.leaseDurationSeconds ?? 1, renewTime: new V1MicroTime(0), leaseTransitions: lease.spec.leaseTransitions ?? 0 } } });
  }
}
