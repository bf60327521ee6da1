import { hostname } from "node:os";
import { V1MicroTime, type V1Job, type V1Pod, type V1Secret } from "@kubernetes/client-node";
import type { Logger } from "../logger.ts";
import { isAlreadyExists, isNotFound, type KubeClients } from "./client.ts";
import { API_VERSION } from "../resources/common.ts";
import { newestPod } from "./pods.ts";

// What the controller does to the cluster besides its own custom resources,
// behind one small interface: the reconciler's tests replace it with a fake
// that records the actions taken, and this is the real one.

export interface EventSubject {
  kind: string;
  name: string;
  namespace: string;
  uid: string;
}

export interface ClusterEvent {
  reason: string;
  warning: boolean;
  note: string;
}

export interface ClusterActions {
  /** Creates the Job; one that already exists (a retried reconcile) counts as created. */
  createJob(namespace: string, job: V1Job): Promise<void>;
  /** The Job as the API server has it now; null when there is none. */
  getJob(namespace: string, name: string): Promise<V1Job | null>;
  /** Deletes the Job and its pods; one already gone counts as deleted. */
  deleteJob(namespace: string, name: string): Promise<void>;
  /** Creates the Secret; one that already exists counts as created. */
  createSecret(namespace: string, secret: V1Secret): Promise<void>;
  /** Deletes the Secret; one already gone counts as deleted. */
  deleteSecret(namespace: string, name: string): Promise<void>;
  /** The newest pod with the label, asked of the API server (not a cache that may lag). */
  newestPod(namespace: string, labelSelector: string): Promise<V1Pod | null>;
  /** The whole log of a container, or with `tail` its last lines (at most maxBytes of them); null when the pod is gone. */
  readPodLog(namespace: string, pod: string, container: string, tail?: { lines: number; maxBytes: number }): Promise<string | null>;
  /** Records a Kubernetes Event; best-effort by design, so it never fails. */
  recordEvent(subject: EventSubject, event: ClusterEvent): Promise<void>;
}

const instance = `${hostname()}-${process.pid}`;

export function kubeClusterActions(k: KubeClients, logger: Logger): ClusterActions {
  return {
    async createJob(namespace, job) {
      try {
        await k.batch.createNamespacedJob({ namespace, body: job });
      } catch (err) {
        if (!isAlreadyExists(err)) throw err;
      }
    },
    async getJob(namespace, name) {
      try {
        return await k.batch.readNamespacedJob({ name, namespace });
      } catch (err) {
        if (isNotFound(err)) return null;
        throw err;
      }
    },
    async deleteJob(namespace, name) {
      try {
        await k.batch.deleteNamespacedJob({ name, namespace, propagationPolicy: "Background", gracePeriodSeconds: 10 });
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    },
    async createSecret(namespace, secret) {
      try {
        await k.core.createNamespacedSecret({ namespace, body: secret });
      } catch (err) {
        if (!isAlreadyExists(err)) throw err;
      }
    },
    async deleteSecret(namespace, name) {
      try {
        await k.core.deleteNamespacedSecret({ name, namespace });
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    },
    async newestPod(namespace, labelSelector) {
      const list = await k.core.listNamespacedPod({ namespace, labelSelector });
      return newestPod(list.items);
    },
    async readPodLog(namespace, pod, container, tail) {
      try {
        return await k.core.readNamespacedPodLog({ name: pod, namespace, container, ...(tail && { tailLines: tail.lines, limitBytes: tail.maxBytes }) });
      } catch (err) {
        if (isNotFound(err)) return null;
        throw err;
      }
    },
    async recordEvent(subject, e) {
      try {
        await k.events.createNamespacedEvent({
          namespace: subject.namespace,
          body: {
            // kubectl's convention: <object>.<unique hex>.
            metadata: { name: `${subject.name}.${process.hrtime.bigint().toString(16)}`, namespace: subject.namespace },
            eventTime: new V1MicroTime(),
            reportingController: "codeplane.dev/controller",
            reportingInstance: instance,
            action: "Reconcile",
            reason: e.reason,
            type: e.warning ? "Warning" : "Normal",
            note: e.note.slice(0, 1024),
            regarding: { apiVersion: API_VERSION, kind: subject.kind, name: subject.name, namespace: subject.namespace, uid: subject.uid },
          },
        });
      } catch (err) {
        logger.debug({ err: err instanceof Error ? err.message : String(err) }, "could not record event");
      }
    },
  };
}
