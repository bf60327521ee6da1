// A keyed work queue in the manner of client-go's workqueue: a key is queued
// at most once, a key being processed is never processed concurrently (a new
// add while it runs queues it again for after), failures retry with
// exponential backoff, and up to `concurrency` different keys run at a time.

export interface WorkQueueOptions {
  concurrency: number;
  baseDelayMs?: number;
  maxDelayMs?: number;
  onError?: (key: string, err: unknown, attempt: number) => void;
}

export type Handler = (key: string) => Promise<void>;

export class WorkQueue {
  readonly #handler: Handler;
  readonly #opts: Required<Omit<WorkQueueOptions, "onError">> & Pick<WorkQueueOptions, "onError">;
  readonly #queue: string[] = [];
  readonly #queued = new Set<string>();
  readonly #active = new Set<string>();
  /** Keys added again while active: requeued once the current run ends. */
  readonly #dirty = new Set<string>();
  readonly #failures = new Map<string, number>();
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
    } catch (err) {
      const attempt = (this.#failures.get(key) ?? 0) + 1;
      this.#failures.set(key, attempt);
      this.#opts.onError?.(key, err, attempt);
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
