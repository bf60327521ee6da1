import { ApiException, BatchV1Api, CoordinationV1Api, CoreV1Api, CustomObjectsApi, EventsV1Api, Log, type KubeConfig } from "@kubernetes/client-node";
import { PooledKubeConfig } from "./pooled-kube-config.ts";

// One place that knows how codeplane reaches Kubernetes: KUBECONFIG when set,
// otherwise the pod's in-cluster service account.

export interface KubeClients {
  config: KubeConfig;
  namespace: string;
  custom: CustomObjectsApi;
  batch: BatchV1Api;
  core: CoreV1Api;
  coordination: CoordinationV1Api;
  events: EventsV1Api;
  log: Log;
}

export function createKubeClients(opts: { kubeconfig: string | null; namespace: string }): KubeClients {
  const config = new PooledKubeConfig();
  if (opts.kubeconfig) config.loadFromFile(opts.kubeconfig);
  else config.loadFromCluster();
  return {
    config,
    namespace: opts.namespace,
    custom: config.makeApiClient(CustomObjectsApi),
    batch: config.makeApiClient(BatchV1Api),
    core: config.makeApiClient(CoreV1Api),
    coordination: config.makeApiClient(CoordinationV1Api),
    events: config.makeApiClient(EventsV1Api),
    log: new Log(config),
  };
}

const statusOf = (err: unknown): number | undefined =>
  err instanceof ApiException ? err.code : typeof (err as { code?: unknown })?.code === "number" ? (err as { code: number }).code : undefined;

export const isNotFound = (err: unknown) => statusOf(err) === 404;
export const isConflict = (err: unknown) => statusOf(err) === 409;
export const isAlreadyExists = isConflict;
