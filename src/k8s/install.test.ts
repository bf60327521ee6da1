import { describe, expect, it } from "vitest";
import { DEFAULT_CLUSTER_CIDRS } from "../resources/egress.ts";
import { InstallRefusedError, planInstall, type InstallSettings } from "./install.ts";
import { buildWorkloadNetworkPolicy } from "./network-policy.ts";

const settings = (internalUrl: string | null, over: Partial<InstallSettings["runs"]["egress"]> = {}): InstallSettings => ({
  kubernetes: { namespace: "runs" },
  runs: { internalUrl, egress: { mode: "restricted", allow: [], clusterCidrs: DEFAULT_CLUSTER_CIDRS, ...over } },
});

describe("planInstall", () => {
  it("labels the run namespace restricted and renders the policy for the git address", () => {
    const plan = planInstall(settings("http://10.244.0.1:8081", { mode: "open" }));
    expect(plan.namespace).toBe("runs");
    expect(plan.namespaceLabels).toEqual({
      "pod-security.kubernetes.io/enforce": "restricted",
      "pod-security.kubernetes.io/enforce-version": "latest",
      "pod-security.kubernetes.io/warn": "restricted",
      "pod-security.kubernetes.io/warn-version": "latest",
      "pod-security.kubernetes.io/audit": "restricted",
      "pod-security.kubernetes.io/audit-version": "latest",
    });
    expect(plan.git).toEqual({ ip: "10.244.0.1", port: 8081 });
    expect(plan.networkPolicy).toEqual(
      buildWorkloadNetworkPolicy({ namespace: "runs", mode: "open", allow: [], clusterCidrs: DEFAULT_CLUSTER_CIDRS, git: { ip: "10.244.0.1", port: 8081 } }),
    );
    expect(plan.warnings).toEqual([]);
  });

  it("refuses a DNS name, saying to use an address or Helm", () => {
    expect(() => planInstall(settings("http://codeplane.codeplane.svc:8081"))).toThrow(InstallRefusedError);
    expect(() => planInstall(settings("http://codeplane.codeplane.svc:8081"))).toThrow(/'codeplane\.codeplane\.svc' is a DNS name.*IP address.*Helm chart/);
  });

  it("refuses egress it cannot enforce", () => {
    expect(() => planInstall(settings("http://10.244.0.1:8081", { allow: [{ cidr: "169.254.169.254/32", ports: [] }] }))).toThrow(InstallRefusedError);
  });

  it("names the policy and its git endpoint as the Helm chart configures them (CODEPLANE_RUN_EGRESS_POLICY, CODEPLANE_RUN_EGRESS_GIT_PODS)", () => {
    const gitPods = { namespace: "codeplane", podSelector: { "app.kubernetes.io/name": "codeplane", "app.kubernetes.io/instance": "cp" }, port: 8081 };
    // The Service's DNS name is no address, but the pods behind it are named, so nothing is refused.
    const plan = planInstall(settings("http://cp-codeplane.codeplane.svc:8081", { policyName: "cp-codeplane-workloads", gitPods }));
    expect(plan.git).toEqual(gitPods);
    expect(plan.warnings).toEqual([]);
    expect(plan.networkPolicy).toEqual(
      buildWorkloadNetworkPolicy({
        namespace: "runs",
        name: "cp-codeplane-workloads",
        mode: "restricted",
        allow: [],
        clusterCidrs: DEFAULT_CLUSTER_CIDRS,
        git: gitPods,
      }),
    );
    expect(planInstall(settings("http://10.244.0.1:8081", { policyName: null, gitPods: null })).networkPolicy.metadata!.name).toBe("codeplane-workloads");
  });

  it("without a git URL opens no git endpoint and warns", () => {
    const plan = planInstall(settings(null));
    expect(plan.git).toBeNull();
    expect(plan.networkPolicy.spec!.egress).toHaveLength(1);
    expect(plan.warnings).toEqual([expect.stringMatching(/CODEPLANE_INTERNAL_URL is not set/)]);
  });
});
