import { describeError } from "./describe-error.ts";

// Polling, one way for every test: ask `probe` until it answers (anything but
// undefined, null or false), and fail with what was awaited, and the last
// error the probe threw, once the time is up. A probe that throws is asked
// again: a server not yet up, a pod not yet created.

export type Probed<T> = T | undefined | null | false;

export interface UntilOptions {
  /** Pause between two asks (250 ms unless said). */
  intervalMs?: number;
}

export async function until<T>(what: string, timeoutMs: number, probe: () => Probed<T> | Promise<Probed<T>>, opts: UntilOptions = {}): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const v = await probe();
      if (v !== undefined && v !== null && v !== false) return v;
    } catch (err) {
      last = err;
    }
    await new Promise((r) => setTimeout(r, opts.intervalMs ?? 250));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? ` (last error: ${describeError(last)})` : ""}`);
}

/**
 * Waits for a service process started by a test to answer `${url}/healthz`: generously, since
 * on a loaded machine it takes tens of seconds to start; a process that exited is not waited for.
 */
export async function untilHealthy(url: string, exited: Promise<unknown>, timeoutMs = 180_000): Promise<void> {
  let gone = false;
  void exited.then(() => (gone = true));
  await until(`${url} to answer /healthz`, timeoutMs, async () => {
    if (gone) throw new Error("the service exited");
    return (await fetch(`${url}/healthz`)).ok;
  });
}
