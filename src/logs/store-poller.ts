import type { Logger } from "../logger.ts";
import type { LiveLogSource, LogLine, LogStore } from "./contracts.ts";

/**
 * The upstream when there is no live log (no cluster reachable, or the pod log ended before the
 * workload's lines were all stored): Postgres polled for lines after the last one seen.
 */
export class StorePoller implements LiveLogSource {
  readonly #store: LogStore;
  readonly #intervalMs: number;
  readonly #pageSize: number;
  readonly #log: Logger;

  constructor(store: LogStore, intervalMs: number, pageSize: number, log: Logger) {
    this.#store = store;
    this.#intervalMs = intervalMs;
    this.#pageSize = pageSize;
    this.#log = log;
  }

  follow(id: string, afterSeq: number, onLine: (l: LogLine) => void): () => void {
    let last = afterSeq;
    let stopped = false;
    let timer: NodeJS.Timeout | null = null;
    const tick = async () => {
      timer = null;
      try {
        for (;;) {
          const page = await this.#store.readLines(id, last, this.#pageSize);
          if (stopped) return;
          for (const l of page) {
            last = l.seq;
            onLine(l);
          }
          if (page.length < this.#pageSize) break;
        }
      } catch (err) {
        this.#log.warn({ err }, "polling stored log lines failed");
      }
      if (!stopped) {
        timer = setTimeout(() => void tick(), this.#intervalMs);
        timer.unref();
      }
    };
    timer = setTimeout(() => void tick(), this.#intervalMs);
    timer.unref();
    return () => {
      stopped = true;
      if (timer) clearTimeout(timer);
    };
  }
}
