import { DomainError } from "../../errors.ts";

// Fetch slots shared fairly between accounts. Clones and fetches are CPU and
// memory heavy and a remote decides how long one takes (up to the git
// timeout), so their number is capped; a single cap shared by everyone would
// let one account's slow remotes hold every slot while other accounts' reads
// wait behind them. So:
//
// - at most `total` fetches run at once, and at most `perAccount` of them for
//   any one account (below `total`, so one account can never take them all);
// - waiting fetches queue per account, and a freed slot goes to the next
//   account in turn (round robin), so an account with many waiting fetches
//   does not delay an account with one by more than one turn;
// - nobody waits longer than `maxWaitMs`: then the fetch is refused with
//   GitBusyError (503 with Retry-After), instead of a request hanging for as
//   long as other tenants' remotes care to take.

export interface FetchSlotsOptions {
  /** Fetches running at once, all accounts together. */
  total: number;
  /** Fetches running at once for one account; at most `total`. */
  perAccount: number;
  /** Longest wait for a slot before the fetch is refused. */
  maxWaitMs: number;
}

/** No fetch slot became free in time: the caller should try again later. */
export class GitBusyError extends DomainError {
  constructor(retryAfterSeconds: number) {
    super("unavailable", `Too many git fetches are running for this account or server; try again in ${retryAfterSeconds} s`, {
      retryAfterSeconds,
    });
    this.name = "GitBusyError";
  }
}

interface Waiter {
  grant: () => void;
  timer: NodeJS.Timeout;
}

interface AccountSlots {
  running: number;
  waiting: Waiter[];
}

export class FetchSlots {
  readonly #opts: FetchSlotsOptions;
  readonly #accounts = new Map<string, AccountSlots>();
  /** Accounts with waiters, in the order they get their next turn. */
  readonly #turns: string[] = [];
  #running = 0;

  constructor(opts: FetchSlotsOptions) {
    const total = Math.max(1, Math.floor(opts.total));
    this.#opts = { total, perAccount: Math.min(total, Math.max(1, Math.floor(opts.perAccount))), maxWaitMs: Math.max(0, opts.maxWaitMs) };
  }

  /** Fetches running now (all accounts, or one). */
  running(account?: string): number {
    return account === undefined ? this.#running : (this.#accounts.get(account)?.running ?? 0);
  }

  /** Fetches waiting for a slot now (all accounts, or one). */
  waiting(account?: string): number {
    if (account !== undefined) return this.#accounts.get(account)?.waiting.length ?? 0;
    let n = 0;
    for (const a of this.#accounts.values()) n += a.waiting.length;
    return n;
  }

  /** Runs `fn` in one of `account`'s slots; throws GitBusyError when none is free within maxWaitMs. */
  async run<T>(account: string, fn: () => Promise<T>): Promise<T> {
    await this.#acquire(account);
    try {
      return await fn();
    } finally {
      this.#release(account);
    }
  }

  #slotsOf(account: string): AccountSlots {
    let a = this.#accounts.get(account);
    if (!a) {
      a = { running: 0, waiting: [] };
      this.#accounts.set(account, a);
    }
    return a;
  }

  #acquire(account: string): Promise<void> {
    const a = this.#slotsOf(account);
    // After every release the queue is drained as far as the caps allow, so a
    // free slot here means nobody who could use it is waiting.
    if (this.#running < this.#opts.total && a.running < this.#opts.perAccount && a.waiting.length === 0) {
      this.#running++;
      a.running++;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        grant: () => {
          clearTimeout(waiter.timer);
          resolve();
        },
        timer: setTimeout(() => {
          const i = a.waiting.indexOf(waiter);
          if (i >= 0) a.waiting.splice(i, 1);
          if (a.waiting.length === 0) this.#forget(account);
          reject(new GitBusyError(Math.max(1, Math.ceil(this.#opts.maxWaitMs / 1000))));
        }, this.#opts.maxWaitMs),
      };
      a.waiting.push(waiter);
      if (!this.#turns.includes(account)) this.#turns.push(account);
    });
  }

  #release(account: string): void {
    const a = this.#slotsOf(account);
    a.running--;
    this.#running--;
    this.#dispatch();
    if (a.running === 0 && a.waiting.length === 0) this.#forget(account);
  }

  /** Hands free slots to waiting accounts in turn, skipping accounts at their cap. */
  #dispatch(): void {
    while (this.#running < this.#opts.total) {
      const i = this.#turns.findIndex((name) => this.#accounts.get(name)!.running < this.#opts.perAccount);
      if (i < 0) return;
      const name = this.#turns[i]!;
      const a = this.#accounts.get(name)!;
      const next = a.waiting.shift()!;
      this.#turns.splice(i, 1);
      if (a.waiting.length > 0) this.#turns.push(name); // to the back of the line
      this.#running++;
      a.running++;
      next.grant();
    }
  }

  #forget(account: string): void {
    const i = this.#turns.indexOf(account);
    if (i >= 0) this.#turns.splice(i, 1);
    const a = this.#accounts.get(account);
    if (a && a.running === 0 && a.waiting.length === 0) this.#accounts.delete(account);
  }
}
