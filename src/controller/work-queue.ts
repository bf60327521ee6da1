// A keyed work queue in the manner of client-go's workqueue: a key is queued
// at most once, a key being processed is never processed concurrently (a new
// add while it runs queues it again for after), failures retry with
// exponential backoff, and up to `concurrency` different keys run at a time.

export interface WorkQueueOptions {
  concurrency: number;
  baseDelayMs?: number;
  maxDelayMs?: number;
  onError?: (key: string, err: unknown, attempt: number) => void;
  /**
   * After this many failures in a row that retrying cannot be expected to
   * cure (see `transient`), a key is not retried: onGiveUp decides what
   * becomes of it. Unbounded when absent.
   */
  maxAttempts?: number;
  /** Failures that may pass by themselves (a server away, a timeout) are retried without limit. */
  transient?: (err: unknown) => boolean;
  onGiveUp?: (key: string, err: unknown) => Promise<void>;
}

export type Handler = (key: string) => Promise<void>;

export class WorkQueue {
  readonly #handler: Handler;
  readonly #opts: Required<Pick<WorkQueueOptions, "concurrency" | "baseDelayMs" | "maxDelayMs">> &
    Omit<WorkQueueOptions, "concurrency" | "baseDelayMs" | "maxDelayMs">;
  readonly #queue: string[] = [];
  readonly #queued = new Set<string>();
  readonly #active = new Set<string>();
  /** Keys added again while active: requeued once the current run ends. */
  readonly #dirty = new Set<string>();
  readonly #failures = new Map<string, number>();
  /** Failures in a row that count towards giving up. */
  readonly #hopeless = new Map<string, number>();
  readonly #timers = new Map<string, NodeJS.Timeout>();
  #running = 0;
  #stopped = false;
  #idleWaiters: (() => void)[] = [];

  constructor(handler: Handler, opts: WorkQueueOptions) {
    this.#handler = handler;
    this.#opts = { baseDelayMs: 200, maxDelayMs: 60_000, ...opts };
  }

  add(key: string): void {
    if (this.#stopped) return;
    if (this.#active.has(key)) {
      this.#dirty.add(key);
      return;
    }
    if (this.#queued.has(key)) return;
    const timer = this.#timers.get(key);
    if (timer) {
      // A fresh event beats a pending retry: handle it now.
      clearTimeout(timer);
      this.#timers.delete(key);
    }
    this.#queued.add(key);
    this.#queue.push(key);
    this.#pump();
  }

  /** Queues `key` after `delayMs` unless something queues it sooner. */
  addAfter(key: string, delayMs: number): void {
    if (this.#stopped || this.#timers.has(key) || this.#queued.has(key)) return;
    const t = setTimeout(() => {
      this.#timers.delete(key);
      this.add(key);
    }, delayMs);
    t.unref();
    this.#timers.set(key, t);
  }

  get length(): number {
    return this.#queue.length;
  }

  /** Resolves when nothing is queued or running (timers may still be pending). */
  idle(): Promise<void> {
    if (this.#running === 0 && this.#queue.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    for (const t of this.#timers.values()) clearTimeout(t);
    this.#timers.clear();
    this.#queue.length = 0;
    this.#queued.clear();
    await this.idle();
  }

  #pump(): void {
    while (this.#running < this.#opts.concurrency && this.#queue.length) {
      const key = this.#queue.shift()!;
      this.#queued.delete(key);
      this.#active.add(key);
      this.#running++;
      void this.#process(key);
    }
    if (this.#running === 0 && this.#queue.length === 0) {
      for (const w of this.#idleWaiters.splice(0)) w();
    }
  }

  async #process(key: string): Promise<void> {
    try {
      await this.#handler(key);
      this.#failures.delete(key);
      this.#hopeless.delete(key);
    } catch (err) {
      const attempt = (this.#failures.get(key) ?? 0) + 1;
      this.#failures.set(key, attempt);
      this.#opts.onError?.(key, err, attempt);
      const hopeless = this.#opts.transient?.(err) ? 0 : (this.#hopeless.get(key) ?? 0) + 1;
      this.#hopeless.set(key, hopeless);
      if (this.#opts.maxAttempts !== undefined && hopeless >= this.#opts.maxAttempts) {
        // A new event for the key starts counting again from zero.
        this.#failures.delete(key);
        this.#hopeless.delete(key);
        await this.#opts.onGiveUp?.(key, err).catch((e: unknown) => this.#opts.onError?.(key, e, attempt));
        return;
      }
      const delay = Math.min(this.#opts.maxDelayMs, this.#opts.baseDelayMs * 2 ** (attempt - 1));
      this.#active.delete(key);
      this.addAfter(key, delay);
    } finally {
      this.#active.delete(key);
      this.#running--;
      if (this.#dirty.delete(key)) this.add(key);
      this.#pump();
    }
  }
}
