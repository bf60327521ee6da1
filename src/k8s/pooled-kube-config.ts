import { KubeConfig, type RequestContext } from "@kubernetes/client-node";

type Dispatcher = NonNullable<ReturnType<RequestContext["getDispatcher"]>>;

/** How long one connection pool serves before the next request builds a new one (client certificates and CAs read from files may rotate). */
const POOL_MS = 10 * 60_000;

/**
 * A KubeConfig whose API calls share connections. @kubernetes/client-node
 * (2.0) gives every request a dispatcher of its own, so each call, watch and
 * log follow paid a TCP connect, a TLS handshake and a new TLS context: most of
 * the controller's CPU in a burst of runs (bench/run-latency.ts). Here the
 * first dispatcher for a cluster and user is kept and reused, with keep-alive,
 * for POOL_MS; then the next request's becomes the pool and the old one closes
 * once its requests (long watches included) have finished. Credentials sent
 * as headers (bearer tokens, re-read per request) are untouched.
 */
export class PooledKubeConfig extends KubeConfig {
  readonly #pools = new Map<string, { dispatcher: Dispatcher; until: number }>();
  #now: () => number;

  constructor(now: () => number = Date.now) {
    super();
    this.#now = now;
  }

  override async applySecurityAuthentication(context: RequestContext): Promise<void> {
    await super.applySecurityAuthentication(context);
    const fresh = context.getDispatcher();
    if (!fresh) return;
    const key = JSON.stringify([this.getCurrentCluster()?.server, this.getCurrentUser()?.name, this.getCurrentContext()]);
    const pool = this.#pools.get(key);
    const now = this.#now();
    if (pool && pool.until > now) {
      context.setDispatcher(pool.dispatcher);
      // The unused one never connected: nothing to close.
      return;
    }
    this.#pools.set(key, { dispatcher: fresh, until: now + POOL_MS });
    if (pool) void pool.dispatcher.close().catch(() => undefined);
  }
}
