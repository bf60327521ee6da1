import { overCap } from "../domain/limits/limits.ts";
import type { CpuMemory } from "../resources/quantity.ts";

// A run over its account's CPU or memory cap by itself (docs/operators/limits.md):
// the API refuses one with 422 when it is created, but a run can still meet
// the built-in limiter asking for more than a cap alone: the cap was lowered
// after it was queued, or it was created while Kueue was configured (no caps
// checked) and the controller found no Kueue. Such a run could never start,
// and as its account's oldest waiting run it would hold the account's later
// runs behind it for ever. So it fails, without a Job, with a reason naming
// the limit, its value and what the run asks; the account's later runs are
// decided as if it were not there (admission.ts). Pure.

/** The failure's reason (the Run's status and Event; the API's `error` says it in words). */
export const OVER_CAP_REASON = "AccountCapExceeded";

/** Whether requests exceed a cap (0: no cap of it) by themselves. Absent requests count as none. */
export function exceedsCapAlone(requests: CpuMemory | undefined, cap: CpuMemory): boolean {
  if (!requests) return false;
  return (cap.cpu > 0 && requests.cpu > cap.cpu) || (cap.memory > 0 && requests.memory > cap.memory);
}

/** What the failed run's `error` says: the compute type, what it requests, the cap and its limit's name, and what to do. */
export function overCapMessage(computeType: string, requests: CpuMemory, cap: CpuMemory): string {
  const why = overCap(cap, requests, computeType) ?? `compute type '${computeType}' is over the account's caps: a run of it could never start`;
  return `${why}, so it failed without starting; raise the account's cap (codeplane accounts limits) or use a smaller compute type`;
}

/**
 * Takes the runs over a cap by themselves out of each account's waiting list
 * (in place; an account left with none is removed), so the decision passes
 * them by; their names, to fail.
 */
export function setAsideOverCap<W extends { name: string; requests?: CpuMemory | undefined }>(
  byAccount: Map<string, W[]>,
  caps: { quotaOf?(account: string): CpuMemory },
): string[] {
  const refused: string[] = [];
  if (!caps.quotaOf) return refused;
  for (const [account, list] of [...byAccount]) {
    const cap = caps.quotaOf(account);
    const fits = list.filter((w) => !exceedsCapAlone(w.requests, cap));
    if (fits.length === list.length) continue;
    for (const w of list) if (!fits.includes(w)) refused.push(w.name);
    if (fits.length) byAccount.set(account, fits);
    else byAccount.delete(account);
  }
  return refused;
}
