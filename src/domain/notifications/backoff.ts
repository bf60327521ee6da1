// When a failed delivery is tried again (pure): exponential backoff from
// `baseSeconds`, doubling per attempt up to `maxDelaySeconds`, with up to
// ±`jitter` of the delay added at random so receivers that came back are not
// hit by every queued delivery in the same second. Retries stop once the next
// attempt would fall after the delivery's retry window (24 hours by default).

export interface BackoffPolicy {
  baseSeconds: number;
  maxDelaySeconds: number;
  /** Fraction of the delay, 0 to 1. */
  jitter: number;
}

/** The delay before attempt `attempt + 1` after attempt `attempt` (1-based) failed; `random` in [0, 1). */
export function retryDelaySeconds(attempt: number, p: BackoffPolicy, random: number): number {
  const exponent = Math.min(Math.max(0, attempt - 1), 40);
  const delay = Math.min(p.maxDelaySeconds, p.baseSeconds * 2 ** exponent);
  const jittered = delay * (1 + p.jitter * (2 * random - 1));
  return Math.max(1, Math.round(jittered));
}

/** When to try again after a failed attempt, or null when the retry window is over. */
export function nextAttemptAt(attempt: number, now: Date, retryUntil: Date, p: BackoffPolicy, random: number): Date | null {
  const at = new Date(now.getTime() + retryDelaySeconds(attempt, p, random) * 1000);
  return at.getTime() > retryUntil.getTime() ? null : at;
}

/** The attempts a delivery gets inside `windowSeconds` when every one fails at once (no jitter): for the docs and tests. */
export function schedule(windowSeconds: number, p: BackoffPolicy): number[] {
  const offsets = [0];
  for (let attempt = 1; ; attempt++) {
    const next = offsets[offsets.length - 1]! + retryDelaySeconds(attempt, { ...p, jitter: 0 }, 0.5);
    if (next > windowSeconds) return offsets;
    offsets.push(next);
  }
}
