import type { V1Pod } from "@kubernetes/client-node";

/** A Job can leave more than one pod behind; the newest is the one that matters. */
export function newestPod(pods: readonly V1Pod[]): V1Pod | null {
  let newest: V1Pod | null = null;
  for (const p of pods) {
    const t = new Date(p.metadata?.creationTimestamp ?? 0).getTime();
    if (!newest || t > new Date(newest.metadata?.creationTimestamp ?? 0).getTime()) newest = p;
  }
  return newest;
}
