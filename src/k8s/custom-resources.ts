import { PatchStrategy, setHeaderOptions, type KubernetesObject, type V1ObjectMeta } from "@kubernetes/client-node";
import { isAlreadyExists, isNotFound, type KubeClients } from "./client.ts";
import { GROUP, VERSION } from "../resources/common.ts";
import { INSTALLATION_LABEL } from "../resources/labels.ts";

export interface CustomResource<Spec, Status> extends KubernetesObject {
  metadata: V1ObjectMeta & { name: string; namespace: string; uid: string; generation?: number };
  spec: Spec;
  status?: Status;
}

const mergePatch = setHeaderOptions("Content-Type", PatchStrategy.MergePatch);

export interface ResourceKind<Spec> {
  kind: string;
  plural: string;
  nameOf(spec: Spec): string;
  labelsOf(spec: Spec): Record<string, string>;
}

/** Create, read and change one kind of codeplane custom resource in codeplane's namespace. */
export class CustomResources<Spec extends object, Status extends object> {
  readonly #k: KubeClients;
  readonly #kind: ResourceKind<Spec>;
  readonly #installation: string;

  /** installation: labelled on every resource created, so only this installation's controller acts on it. */
  constructor(k: KubeClients, kind: ResourceKind<Spec>, installation: string) {
    this.#k = k;
    this.#kind = kind;
    this.#installation = installation;
  }

  get namespace(): string {
    return this.#k.namespace;
  }

  #params() {
    return { group: GROUP, version: VERSION, namespace: this.#k.namespace, plural: this.#kind.plural };
  }

  #named(name: string) {
    return { ...this.#params(), name };
  }

  /** Idempotent: a resource that already exists (a retried request) is returned as it is. */
  async create(spec: Spec): Promise<CustomResource<Spec, Status>> {
    const name = this.#kind.nameOf(spec);
    const body = {
      apiVersion: `${GROUP}/${VERSION}`,
      kind: this.#kind.kind,
      metadata: { name, namespace: this.#k.namespace, labels: { ...this.#kind.labelsOf(spec), [INSTALLATION_LABEL]: this.#installation } },
      spec,
    };
    try {
      return (await this.#k.custom.createNamespacedCustomObject({ ...this.#params(), body })) as CustomResource<Spec, Status>;
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
      const existing = await this.get(name);
      if (!existing) throw err;
      return existing;
    }
  }

  async get(name: string): Promise<CustomResource<Spec, Status> | null> {
    try {
      return (await this.#k.custom.getNamespacedCustomObject(this.#named(name))) as CustomResource<Spec, Status>;
    } catch (err) {
      if (isNotFound(err)) return null;
      throw err;
    }
  }

  async list(): Promise<CustomResource<Spec, Status>[]> {
    const res = (await this.#k.custom.listNamespacedCustomObject(this.#params())) as { items: CustomResource<Spec, Status>[] };
    return res.items;
  }

  /** Returns false when the resource no longer exists. */
  async requestCancel(name: string): Promise<boolean> {
    try {
      await this.#k.custom.patchNamespacedCustomObject({ ...this.#named(name), body: { spec: { cancelRequested: true } } }, mergePatch);
      return true;
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
  }

  async patchStatus(name: string, status: Status): Promise<CustomResource<Spec, Status> | null> {
    try {
      return (await this.#k.custom.patchNamespacedCustomObjectStatus({ ...this.#named(name), body: { status } }, mergePatch)) as CustomResource<Spec, Status>;
    } catch (err) {
      if (isNotFound(err)) return null;
      throw err;
    }
  }

  /** Deleting the resource deletes its Job, pods and Secret through their owner references. */
  async delete(name: string): Promise<void> {
    try {
      await this.#k.custom.deleteNamespacedCustomObject({ ...this.#named(name), propagationPolicy: "Background" });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
}
