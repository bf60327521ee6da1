import { PatchStrategy, setHeaderOptions, type V1Job, type V1Secret } from "@kubernetes/client-node";
import { isAlreadyExists, isNotFound, type KubeClients } from "./client.ts";
import { POOL_LABEL, POOL_POD_LABEL } from "../resources/warm-pools.ts";

// What the warm-pool manager (src/controller/warm-pools.ts) does to the
// cluster, behind one small interface its tests replace with a fake.

const mergePatch = setHeaderOptions("Content-Type", PatchStrategy.MergePatch);

export interface RunOwner {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
}

export interface PoolCluster {
  /** Every pool Job of the namespace (labelled codeplane.dev/pool), as the API server has them now. */
  listPoolJobs(namespace: string): Promise<V1Job[]>;
  /** Creates the Job, then its Secret (made by `secret` from the Job's uid, so it goes with the Job). */
  createPoolJob(namespace: string, job: V1Job, secret: (jobUid: string) => V1Secret): Promise<void>;
  /**
   * Hands a claimed pool Job to its run: the Run becomes its owner (kubectl and deletion treat it as
   * the run's Job), the Job and its pods get the run's labels (the controller, the live log and the
   * limiter find them by those), and its deadline becomes the run's. false when the Job is gone.
   */
  adopt(
    namespace: string,
    jobName: string,
    poolPodId: string,
    owner: RunOwner,
    labels: Record<string, string>,
    activeDeadlineSeconds: number,
  ): Promise<boolean>;
  deleteJob(namespace: string, name: string): Promise<void>;
}

export function kubePoolCluster(k: KubeClients): PoolCluster {
  return {
    async listPoolJobs(namespace) {
      return (await k.batch.listNamespacedJob({ namespace, labelSelector: POOL_LABEL })).items;
    },
    async createPoolJob(namespace, job, secret) {
      let created: V1Job;
      try {
        created = await k.batch.createNamespacedJob({ namespace, body: job });
      } catch (err) {
        if (!isAlreadyExists(err)) throw err;
        created = await k.batch.readNamespacedJob({ namespace, name: job.metadata!.name! });
      }
      try {
        await k.core.createNamespacedSecret({ namespace, body: secret(created.metadata!.uid!) });
      } catch (err) {
        if (!isAlreadyExists(err)) throw err;
      }
    },
    async adopt(namespace, jobName, poolPodId, owner, labels, activeDeadlineSeconds) {
      try {
        await k.batch.patchNamespacedJob(
          {
            name: jobName,
            namespace,
            body: {
              metadata: { labels, ownerReferences: [{ ...owner, controller: true, blockOwnerDeletion: true }] },
              spec: { activeDeadlineSeconds },
            },
          },
          mergePatch,
        );
      } catch (err) {
        if (isNotFound(err)) return false;
        throw err;
      }
      const pods = await k.core.listNamespacedPod({ namespace, labelSelector: `${POOL_POD_LABEL}=${poolPodId}` });
      for (const pod of pods.items) {
        try {
          await k.core.patchNamespacedPod({ name: pod.metadata!.name!, namespace, body: { metadata: { labels } } }, mergePatch);
        } catch (err) {
          if (!isNotFound(err)) throw err;
        }
      }
      return true;
    },
    async deleteJob(namespace, name) {
      try {
        await k.batch.deleteNamespacedJob({ name, namespace, propagationPolicy: "Background", gracePeriodSeconds: 5 });
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    },
  };
}
