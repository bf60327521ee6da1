import { ApiextensionsV1Api, CoreV1Api, type KubeConfig, type V1CustomResourceDefinition } from "@kubernetes/client-node";
import { isNotFound, isAlreadyExists } from "./client.ts";
import { CRD_FILES } from "./crds/definition.ts";

// `codeplane install`: what a cluster needs before codeplane can run there,
// for development and tests (Helm does the same in production).

export async function applyCrds(config: KubeConfig): Promise<string[]> {
  const api = config.makeApiClient(ApiextensionsV1Api);
  const names: string[] = [];
  for (const build of Object.values(CRD_FILES)) {
    const body = build() as unknown as V1CustomResourceDefinition;
    const name = body.metadata!.name!;
    try {
      const existing = await api.readCustomResourceDefinition({ name });
      await api.replaceCustomResourceDefinition({ name, body: { ...body, metadata: { ...body.metadata, resourceVersion: existing.metadata!.resourceVersion! } } });
    } catch (err) {
      if (!isNotFound(err)) throw err;
      await api.createCustomResourceDefinition({ body });
    }
    // Wait until the API server serves the new type, so a Run can be created right after.
    for (let i = 0; i < 100; i++) {
      const crd = await api.readCustomResourceDefinition({ name });
      if (crd.status?.conditions?.some((c) => c.type === "Established" && c.status === "True")) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    names.push(name);
  }
  return names;
}

export async function ensureNamespace(config: KubeConfig, namespace: string): Promise<void> {
  try {
    await config.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: namespace } } });
  } catch (err) {
    if (!isAlreadyExists(err)) throw err;
  }
}
