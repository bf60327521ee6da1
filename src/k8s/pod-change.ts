import { Watch, type KubeConfig } from "@kubernetes/client-node";

/**
 * Resolves at the first change to the pods `labelSelector` matches after
 * `resourceVersion` (the list it was read from), or after `timeoutMs`, or on
 * `signal`; never rejects. Lets a waiter look again as soon as a pod is
 * created or its containers start, instead of sleeping on a backoff that can
 * be a second late; the timeout keeps a failed or silent watch from mattering.
 */
export function nextPodChange(
  config: KubeConfig,
  q: { namespace: string; labelSelector: string; resourceVersion: string | undefined },
  timeoutMs: number,
  signal: AbortSignal,
): Promise<void> {
  return new Promise<void>((resolve) => {
    let watch: AbortController | null = null;
    let settled = false;
    const finish = () => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal.removeEventListener("abort", finish);
      watch?.abort();
      resolve();
    };
    const timer = setTimeout(finish, timeoutMs);
    timer.unref();
    if (signal.aborted) return finish();
    signal.addEventListener("abort", finish, { once: true });
    if (!q.resourceVersion) return;
    new Watch(config)
      .watch(
        `/api/v1/namespaces/${encodeURIComponent(q.namespace)}/pods`,
        { labelSelector: q.labelSelector, resourceVersion: q.resourceVersion, allowWatchBookmarks: false },
        // Any event (an ERROR such as 410 Gone included) means the list is worth reading again.
        () => finish(),
        // A watch that ends or fails early leaves the timeout to bound the wait.
        () => undefined,
      )
      .then(
        (c) => {
          watch = c;
          if (settled) c.abort();
        },
        () => undefined,
      );
  });
}
