import { hostname } from "node:os";
import { isDeepStrictEqual } from "node:util";
import { V1MicroTime, type V1Pod } from "@kubernetes/client-node";
import { isNotFound, type KubeClients } from "../k8s/client.ts";
import { setCondition } from "../k8s/conditions.ts";
import { API_VERSION, type Condition } from "../k8s/crds/common.ts";
import { newestPod } from "../k8s/pods.ts";
import type { Logger } from "../logger.ts";

// What the Run and Analysis reconcilers do alike.

/**
 * The API server hands status back with its keys in its own order and
 * without undefined fields; compare meaning, not bytes, or every reconcile
 * would write (and so trigger) another.
 */
export function sameStatus(a: object | undefined, b: object): boolean {
  return isDeepStrictEqual(JSON.parse(JSON.stringify(a ?? {})), JSON.parse(JSON.stringify(b)));
}

const instance = `${hostname()}-${process.pid}`;

export interface EventSubject {
  kind: string;
  name: string;
  namespace: string;
  uid: string;
}

/** Records a Kubernetes Event on the resource; best-effort by design, so it never fails a reconcile. */
export async function recordEvent(k: KubeClients, logger: Logger, subject: EventSubject, e: { reason: string; warning: boolean; note: string }): Promise<void> {
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
}

export async function deleteJob(k: KubeClients, name: string, namespace: string): Promise<void> {
  try {
    await k.batch.deleteNamespacedJob({ name, namespace, propagationPolicy: "Background", gracePeriodSeconds: 10 });
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
}

/** The newest pod with the label, asked of the API server (not a cache that may lag). */
export async function podFromApi(k: KubeClients, namespace: string, labelSelector: string): Promise<V1Pod | null> {
  const list = await k.core.listNamespacedPod({ namespace, labelSelector });
  return newestPod(list.items);
}

export interface LifecycleFacts {
  /** "run" or "analysis", for the messages kubectl shows. */
  noun: string;
  phase: string;
  terminal: boolean;
  reason: string;
  error: string | null;
  startTime?: string | undefined;
  /** Reason and message of Started once the main container has started. */
  started: { reason: string; message: string };
  generation: number;
}

/** The Started and Finished conditions both resources carry, updated from one observation. */
export function lifecycleConditions(previous: Condition[] | undefined, f: LifecycleFacts, now: Date): Condition[] {
  const conditions = setCondition(
    previous,
    {
      type: "Started",
      status: f.startTime ? "True" : "False",
      reason: f.startTime ? f.started.reason : f.reason,
      message: f.startTime ? f.started.message : `the ${f.noun} is ${f.phase}`,
      observedGeneration: f.generation,
    },
    now,
  );
  return setCondition(
    conditions,
    {
      type: "Finished",
      status: f.terminal ? "True" : "False",
      reason: f.reason,
      message: f.terminal ? (f.error ?? `the ${f.noun} ${f.phase}`) : `the ${f.noun} is ${f.phase}`,
      observedGeneration: f.generation,
    },
    now,
  );
}
