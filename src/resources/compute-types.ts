import { z } from "zod";

// Named presets a run asks for by `compute_type`; operators define them in the
// Helm values (CODEPLANE_COMPUTE_TYPES, JSON). These defaults fit a laptop or
// a small node; gpu-a10g only schedules where such a node exists.

const quantity = z.string().regex(/^[0-9]+(\.[0-9]+)?(m|Ki|Mi|Gi|Ti|k|M|G|T)?$/, "must be a Kubernetes quantity");

export const computePresetSchema = z.strictObject({
  requests: z.record(z.string(), quantity),
  limits: z.record(z.string(), quantity),
  nodeSelector: z.record(z.string(), z.string()).default({}),
  tolerations: z
    .array(
      z.strictObject({
        key: z.string().optional(),
        operator: z.enum(["Exists", "Equal"]).optional(),
        value: z.string().optional(),
        effect: z.enum(["NoSchedule", "PreferNoSchedule", "NoExecute"]).optional(),
      }),
    )
    .default([]),
  // A sandboxing runtime (gVisor, Kata) for this preset's pods, where the cluster has its RuntimeClass.
  runtimeClassName: z
    .string()
    .regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/)
    .max(253)
    .optional(),
});
export type ComputePreset = z.infer<typeof computePresetSchema>;

export const computeTypesSchema = z.record(
  z
    .string()
    .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/)
    .max(63),
  computePresetSchema,
);
export type ComputeTypes = z.infer<typeof computeTypesSchema>;

export const DEFAULT_COMPUTE_TYPE = "cpu-general";

export const DEFAULT_COMPUTE_TYPES: ComputeTypes = {
  "cpu-general": { requests: { cpu: "250m", memory: "256Mi" }, limits: { cpu: "1", memory: "1Gi" }, nodeSelector: {}, tolerations: [] },
  "cpu-memory": { requests: { cpu: "250m", memory: "1Gi" }, limits: { cpu: "1", memory: "4Gi" }, nodeSelector: {}, tolerations: [] },
  "gpu-a10g": {
    requests: { cpu: "1", memory: "4Gi", "nvidia.com/gpu": "1" },
    limits: { cpu: "4", memory: "16Gi", "nvidia.com/gpu": "1" },
    nodeSelector: { "node.kubernetes.io/instance-type": "g5.xlarge" },
    tolerations: [{ key: "nvidia.com/gpu", operator: "Exists", effect: "NoSchedule" }],
  },
};
