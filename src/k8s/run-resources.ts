import { PatchStrategy, setHeaderOptions, type KubernetesObject, type V1ObjectMeta } from "@kubernetes/client-node";
import { isAlreadyExists, isNotFound, type KubeClients } from "./client.ts";
import { GROUP, VERSION } from "./crds/common.ts";
import { RUN_KIND, RUN_PLURAL, type RunSpec, type RunStatus } from "./crds/run.ts";
import { runLabels, runResourceName } from "./labels.ts";

export interface RunResource extends KubernetesObject {
  metadata: V1ObjectMeta & { name: string; namespace: string; uid: string; generation?: number };
  spec: RunSpec;
  status?: RunStatus;
}

const mergePatch = setHeaderOptions("Content-Type", PatchStrategy.MergePatch);

/** Create, read and change Run custom resources in codeplane's namespace. */
export class RunResources {
  readonly #k: KubeClients;

  constructor(k: KubeClients) {
    this.#k = k;
  }

  get namespace(): string {
    return this.#k.namespace;
  }

  #params() {
    return { group: GROUP, version: VERSION, namespace: this.#k.namespace, plural: RUN_PLURAL };
  }

  #named(name: string) {
    return { ...this.#params(), name };
  }

  /** Idempotent: a Run that already exists (a retried request) is returned as it is. */
  async create(spec: RunSpec): Promise<RunResource> {
    const name = runResourceName(spec.runId);
    const body = {
      apiVersion: `${GROUP}/${VERSION}`,
      kind: RUN_KIND,
      metadata: { name, namespace: this.#k.namespace, labels: runLabels(spec.accountId, spec.repositoryId, spec.runId) },
      spec,
    };
    try {
      return (await this.#k.custom.createNamespacedCustomObject({ ...this.#params(), body })) as RunResource;
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
      const existing = await this.get(name);
      if (!existing) throw err;
      return existing;
    }
  }

  async get(name: string): Promise<RunResource | null> {
    try {
      return (await this.#k.custom.getNamespacedCustomObject(this.#named(name))) as RunResource;
    } catch (err) {
      if (isNotFound(err)) return null;
      throw err;
    }
  }

  async list(): Promise<RunResource[]> {
    const res = (await this.#k.custom.listNamespacedCustomObject(this.#params())) as { items: RunResource[] };
    return res.items;
  }

  /** Returns false when the Run no longer exists. */
  async requestCancel(name: string): Promise<boolean> {
    try {
      await this.#k.custom.patchNamespacedCustomObject({ ...this.#named(name), body: { spec: { cancelRequested: true } } }, mergePatch);
      return true;
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
  }

  async patchStatus(name: string, status: RunStatus): Promise<RunResource | null> {
    try {
      return (await this.#k.custom.patchNamespacedCustomObjectStatus({ ...this.#named(name), body: { status } }, mergePatch)) as RunResource;
    } catch (err) {
      if (isNotFound(err)) return null;
      throw err;
    }
  }

  /** Deleting the Run deletes its Job, pods and Secret through their owner references. */
  async delete(name: string): Promise<void> {
    try {
      await this.#k.custom.deleteNamespacedCustomObject({ ...this.#named(name), propagationPolicy: "Background" });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
}
