import type { ClientMetadataLimits } from "../config.ts";
import { OAuthProblem } from "./errors.ts";

// A Client ID Metadata Document client_id makes codeplane GET a URL on behalf
// of whoever sent it, before anyone is authenticated: without bounds that is a
// reflector (100 requests, 100 outbound GETs, all at once). This gate is what
// one process lets that cost: requests for the same URL share the fetch in
// flight (single flight), a URL that failed is answered from memory for a
// while (it would fail again), and at most `maxFetches` run at once
// process-wide; beyond that the request is refused (503 with Retry-After)
// rather than queued, so waiting requests hold nothing.

/** Bounds memory under many distinct failing URLs; the memory starts over when full. */
const MAX_REMEMBERED_FAILURES = 10_000;
const BUSY_RETRY_SECONDS = 5;
const PRUNE_EVERY_MS = 3_600_000;

export class MetadataFetchGate {
  readonly #limits: Pick<ClientMetadataLimits, "maxFetches" | "failureSeconds">;
  readonly #inFlight = new Map<string, Promise<unknown>>();
  readonly #failures = new Map<string, { error: unknown; until: number }>();
  #running = 0;
  #prunedAt = Number.NEGATIVE_INFINITY;

  constructor(limits: Pick<ClientMetadataLimits, "maxFetches" | "failureSeconds">) {
    this.#limits = limits;
  }

  /** Fetches running now (for tests and metrics). */
  get running(): number {
    return this.#running;
  }

  /**
   * Runs `work` for `url` within the bounds: joins the run in flight for the
   * same URL, rethrows a failure remembered for it, or refuses when
   * `maxFetches` are already running. A failure of `work` is remembered.
   */
  run<T>(url: string, work: () => Promise<T>, now = Date.now()): Promise<T> {
    const shared = this.#inFlight.get(url);
    if (shared) return shared as Promise<T>;
    const failed = this.#failures.get(url);
    if (failed && failed.until > now) return Promise.reject(failed.error);
    if (failed) this.#failures.delete(url);
    if (this.#running >= this.#limits.maxFetches) {
      return Promise.reject(
        new OAuthProblem("temporarily_unavailable", "too many client metadata documents are being fetched; try again shortly", 503, {
          "Retry-After": String(BUSY_RETRY_SECONDS),
        }),
      );
    }
    this.#running++;
    const p = (async () => {
      try {
        return await work();
      } catch (err) {
        // Only what the document did (unreachable, refused, invalid): a database hiccup is not the URL's fault.
        if (err instanceof OAuthProblem) this.#remember(url, err, now);
        throw err;
      } finally {
        this.#running--;
        this.#inFlight.delete(url);
      }
    })();
    this.#inFlight.set(url, p);
    return p;
  }

  /** True at most once an hour: when the caller should prune unused metadata-document clients. */
  pruneDue(now = Date.now()): boolean {
    if (now - this.#prunedAt < PRUNE_EVERY_MS) return false;
    this.#prunedAt = now;
    return true;
  }

  #remember(url: string, error: unknown, now: number): void {
    if (this.#limits.failureSeconds === 0) return;
    if (this.#failures.size >= MAX_REMEMBERED_FAILURES) this.#failures.clear();
    this.#failures.set(url, { error, until: now + this.#limits.failureSeconds * 1000 });
  }
}
