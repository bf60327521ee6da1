import type { Logger } from "../../logger.ts";

// A queue drained by whichever replica looks first: look every pollMs (work
// other replicas accepted, retries that came due), or at once when woken (work
// this replica just accepted). One drain at a time per loop; a wake during a
// drain makes it look once more afterwards, so nothing waits for the next poll.

export interface DrainLoopOptions {
  name: string;
  logger: Logger;
  pollMs: number;
  /** Handles one due item; false when there was none. */
  next(): Promise<boolean>;
  /** Runs after each drain (housekeeping). */
  after?(): Promise<void>;
}

export class DrainLoop {
  readonly #o: DrainLoopOptions;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | null = null;
  #again = false;
  #stopped = true;

  constructor(o: DrainLoopOptions) {
    this.#o = o;
  }

  start(): void {
    if (!this.#stopped) return;
    this.#stopped = false;
    const tick = () => {
      this.wake();
      this.#timer = setTimeout(tick, this.#o.pollMs);
      this.#timer.unref();
    };
    tick();
  }

  wake(): void {
    if (this.#stopped) return;
    if (this.#running) {
      this.#again = true;
      return;
    }
    this.#running = this.#drain()
      .catch((err: unknown) => this.#o.logger.warn({ err }, `${this.#o.name}: could not read the queue; trying again shortly`))
      .finally(() => {
        this.#running = null;
        if (this.#again) {
          this.#again = false;
          this.wake();
        }
      });
  }

  /** Stops looking; an item being handled is finished first. */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#running;
  }

  /** Resolves once nothing is being handled (tests). */
  async idle(): Promise<void> {
    while (this.#running) await this.#running;
  }

  async #drain(): Promise<void> {
    while (!this.#stopped && (await this.#o.next()));
    await this.#o.after?.();
  }
}
