import { z } from "zod";

export const GROUP = "codeplane.dev";
export const VERSION = "v1alpha1";
export const API_VERSION = `${GROUP}/${VERSION}`;
export const CATEGORY = "codeplane";

// Kubernetes' own Condition shape (metav1.Condition), so kubectl, kstatus and
// Argo CD read our status the way they read built-in resources.
export const conditionSchema = z.object({
  type: z.string().min(1).max(316),
  status: z.enum(["True", "False", "Unknown"]),
  reason: z.string().min(1).max(1024),
  message: z.string().max(32768),
  observedGeneration: z.int().min(0).optional(),
  lastTransitionTime: z.iso.datetime(),
});
export type Condition = z.infer<typeof conditionSchema>;

export const UUID = z.string().regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
export const COMMIT = z.string().regex(/^[0-9a-f]{40}$/);

/** What every workload resource's spec (Run, Analysis) says, whatever else its kind adds. */
export interface WorkloadSpec {
  accountId: string;
  repositoryId: string;
  repositoryUrl: string;
  commitHash: string;
  timeoutSeconds: number;
  cancelRequested?: boolean | undefined;
}

/** The status fields every workload kind's CRD has (Run, Analysis); a kind extends it with its own. */
export const workloadStatusShape = {
  observedGeneration: z.int().min(0).optional(),
  conditions: z.array(conditionSchema).optional(),
  jobName: z.string().optional(),
  podName: z.string().optional(),
  exitCode: z.int().nullable().optional().meta({ description: "The main container's exit code." }),
  error: z.string().max(4096).nullable().optional().meta({ description: "Why it failed or was cancelled." }),
  startTime: z.iso.datetime().optional(),
  completionTime: z.iso.datetime().optional(),
};

/** What every workload resource's status carries, whatever else its kind adds. */
export interface WorkloadStatus {
  phase?: string | undefined;
  observedGeneration?: number | undefined;
  conditions?: Condition[] | undefined;
  jobName?: string | undefined;
  podName?: string | undefined;
  exitCode?: number | null | undefined;
  error?: string | null | undefined;
  startTime?: string | undefined;
  completionTime?: string | undefined;
}

/** kubectl get columns: status, repository and commit first, age last, the kind's own in between. */
export function workloadPrinterColumns(own: { name: string; type: string; jsonPath: string }[]) {
  return [
    { name: "Status", type: "string", jsonPath: ".status.phase" },
    { name: "Repository", type: "string", jsonPath: ".spec.repositoryId", priority: 1 },
    { name: "Commit", type: "string", jsonPath: ".spec.commitHash" },
    ...own,
    { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" },
  ];
}
