import type { Condition } from "./common.ts";

/**
 * Sets a condition the way apimachinery's meta.SetStatusCondition does:
 * lastTransitionTime moves only when `status` changes, so a steady state does
 * not rewrite the resource on every reconcile.
 */
export function setCondition(conditions: readonly Condition[] | undefined, next: Omit<Condition, "lastTransitionTime">, now: Date): Condition[] {
  const list = [...(conditions ?? [])];
  const i = list.findIndex((c) => c.type === next.type);
  const prev = i >= 0 ? list[i] : undefined;
  const lastTransitionTime = prev && prev.status === next.status ? prev.lastTransitionTime : now.toISOString();
  const merged: Condition = { ...next, lastTransitionTime };
  if (i >= 0) list[i] = merged;
  else list.push(merged);
  return list;
}

export const findCondition = (conditions: readonly Condition[] | undefined, type: string) => conditions?.find((c) => c.type === type);
