import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_CLUSTER_CIDRS } from "../../src/resources/egress.ts";
import { installCluster, planInstall, type InstallSettings } from "../../src/k8s/install.ts";
import { KUBECONFIG } from "../helpers/cluster.ts";

// `codeplane install` against the real cluster: the run namespace gets the
// restricted Pod Security Standard (which the API server then enforces), the
// workload NetworkPolicy is what the builder renders, a second install changes
// nothing, and a changed setting replaces the policy.

const settings = (namespace: string, over: Partial<InstallSettings["runs"]> = {}): InstallSettings => ({
  kubernetes: { namespace },
  runs: { internalUrl: "http://10.244.0.1:8081", egress: { mode: "restricted", allow: [], clusterCidrs: DEFAULT_CLUSTER_CIDRS }, ...over },
});

const PSS = {
  "pod-security.kubernetes.io/enforce": "restricted",
  "pod-security.kubernetes.io/enforce-version": "latest",
  "pod-security.kubernetes.io/warn": "restricted",
  "pod-security.kubernetes.io/warn-version": "latest",
  "pod-security.kubernetes.io/audit": "restricted",
  "pod-security.kubernetes.io/audit-version": "latest",
};

/** A pod spec that meets the restricted standard, or (`root`) one that does not. */
const pod = (name: string, root: boolean): k8s.V1Pod => ({
  metadata: { name },
  spec: {
    containers: [
      {
        name: "c",
        image: "codeplane-runner:dev",
        securityContext: root
          ? { runAsUser: 0 }
          : {
              runAsNonRoot: true,
              runAsUser: 10001,
              allowPrivilegeEscalation: false,
              capabilities: { drop: ["ALL"] },
              seccompProfile: { type: "RuntimeDefault" },
            },
      },
    ],
  },
});

describe("codeplane install", () => {
  let kc: k8s.KubeConfig;
  let core: k8s.CoreV1Api;
  let net: k8s.NetworkingV1Api;
  const suffix = randomBytes(4).toString("hex");
  const fresh = `install-new-${suffix}`;
  const existing = `install-old-${suffix}`;

  beforeAll(async () => {
    if (!existsSync(KUBECONFIG)) throw new Error(`No cluster: ${KUBECONFIG} does not exist. Run \`make cluster-up\` first, or point KUBECONFIG at a cluster.`);
    kc = new k8s.KubeConfig();
    kc.loadFromFile(KUBECONFIG);
    core = kc.makeApiClient(k8s.CoreV1Api);
    net = kc.makeApiClient(k8s.NetworkingV1Api);
  });

  afterAll(async () => {
    for (const name of [fresh, existing]) await core?.deleteNamespace({ name, propagationPolicy: "Background" }).catch(() => undefined);
  });

  it("creates the run namespace under the restricted standard and the workload policy the builder renders; a second install changes nothing", async () => {
    const result = await installCluster(kc, settings(fresh));
    expect({ ...result, crds: [...result.crds].sort() }).toEqual({
      crds: ["analyses.codeplane.dev", "runs.codeplane.dev"],
      namespace: fresh,
      networkPolicy: "codeplane-workloads",
      git: { ip: "10.244.0.1", port: 8081 },
      warnings: [],
    });

    const ns = await core.readNamespace({ name: fresh });
    expect(ns.metadata!.labels).toMatchObject(PSS);
    const policy = await net.readNamespacedNetworkPolicy({ name: "codeplane-workloads", namespace: fresh });
    const planned = planInstall(settings(fresh)).networkPolicy;
    expect(policy.spec).toEqual(planned.spec);
    expect(policy.metadata!.labels).toEqual(planned.metadata!.labels);

    await installCluster(kc, settings(fresh));
    const again = await net.readNamespacedNetworkPolicy({ name: "codeplane-workloads", namespace: fresh });
    expect(again.metadata!.resourceVersion).toBe(policy.metadata!.resourceVersion);
    expect(again.metadata!.generation).toBe(1);
    expect((await core.readNamespace({ name: fresh })).metadata!.resourceVersion).toBe(ns.metadata!.resourceVersion);
  });

  it("the API server then refuses pods that break the standard and admits those that meet it", async () => {
    const err = await core.createNamespacedPod({ namespace: fresh, body: pod("root", true), dryRun: "All" }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(k8s.ApiException);
    expect((err as k8s.ApiException<unknown>).code).toBe(403);
    const message = (JSON.parse(String((err as k8s.ApiException<unknown>).body)) as { message: string }).message;
    expect(message).toMatch(/violates PodSecurity "restricted:latest"/);
    await core.createNamespacedPod({ namespace: fresh, body: pod("fine", false), dryRun: "All" });
  });

  it("adds the labels to an existing namespace, keeping its others and tightening a weaker standard", async () => {
    await core.createNamespace({
      body: { metadata: { name: existing, labels: { team: "platform", "pod-security.kubernetes.io/enforce": "baseline" } } },
    });
    await installCluster(kc, settings(existing));
    const labels = (await core.readNamespace({ name: existing })).metadata!.labels!;
    expect(labels).toEqual({ ...PSS, team: "platform", "kubernetes.io/metadata.name": existing });
  });

  it("replaces the policy when a setting changes", async () => {
    const changed = settings(fresh, {
      internalUrl: "http://10.244.0.1:9000",
      egress: { mode: "open", allow: [{ cidr: "10.96.0.0/16", ports: [{ protocol: "TCP", port: 3128 }] }], clusterCidrs: DEFAULT_CLUSTER_CIDRS },
    });
    await installCluster(kc, changed);
    const policy = await net.readNamespacedNetworkPolicy({ name: "codeplane-workloads", namespace: fresh });
    expect(policy.spec).toEqual(planInstall(changed).networkPolicy.spec);
    expect(policy.metadata!.generation).toBe(2);
    // Back to restricted: the open rule is gone again.
    await installCluster(kc, settings(fresh));
    const back = await net.readNamespacedNetworkPolicy({ name: "codeplane-workloads", namespace: fresh });
    expect(back.spec).toEqual(planInstall(settings(fresh)).networkPolicy.spec);
    expect(JSON.stringify(back.spec)).not.toContain("0.0.0.0/0");
  });
});
