import { z } from "zod";
import { ANALYSIS_KIND, ANALYSIS_PLURAL, ANALYSIS_PRINTER_COLUMNS, analysisSpecSchema, analysisStatusSchema } from "./analysis.ts";
import { CATEGORY, GROUP, VERSION } from "./common.ts";
import { RUN_KIND, RUN_PLURAL, RUN_PRINTER_COLUMNS, runSpecSchema, runStatusSchema } from "./run.ts";

// The CRD manifests are generated from the zod schemas the controller uses,
// so the two cannot drift; `npm run crds` rewrites crds/ and a unit test fails
// when the committed files are stale.

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/**
 * zod's OpenAPI 3.0 output, made structural as the API server requires:
 * no `additionalProperties: false` (unknown fields are pruned anyway), and no
 * bounds that only restate JavaScript's number range.
 */
function structural(node: Json): Json {
  if (Array.isArray(node)) return node.map(structural);
  if (node === null || typeof node !== "object") return node;
  // A union of types is not structural (anyOf branches may not name a type):
  // the field keeps any value and the controller's zod schema checks it.
  if (Array.isArray(node.anyOf))
    return { ...(node.description !== undefined && { description: node.description }), "x-kubernetes-preserve-unknown-fields": true };
  const out: { [k: string]: Json } = {};
  for (const [k, v] of Object.entries(node)) {
    if (k === "additionalProperties" && v === false) continue;
    if ((k === "maximum" && v === Number.MAX_SAFE_INTEGER) || (k === "minimum" && v === Number.MIN_SAFE_INTEGER)) continue;
    if (k === "$schema" || k === "id") continue;
    out[k] = structural(v);
  }
  if (out.type === "integer" && out.format === undefined) out.format = "int64";
  // The API server checks date-time itself; zod's equivalent regex only adds noise.
  if (out.format === "date-time") delete out.pattern;
  return out;
}

const openapi = (schema: z.ZodType) => structural(z.toJSONSchema(schema, { target: "openapi-3.0", io: "input" }) as Json);

function crd(kind: string, plural: string, shortName: string, spec: z.ZodType, status: z.ZodType, columns: object[]) {
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `${plural}.${GROUP}`, labels: { "app.kubernetes.io/name": "codeplane", "app.kubernetes.io/managed-by": "codeplane" } },
    spec: {
      group: GROUP,
      scope: "Namespaced",
      names: { kind, listKind: `${kind}List`, plural, singular: kind.toLowerCase(), shortNames: [shortName], categories: [CATEGORY] },
      versions: [
        {
          name: VERSION,
          served: true,
          storage: true,
          subresources: { status: {} },
          additionalPrinterColumns: columns,
          schema: {
            openAPIV3Schema: {
              type: "object",
              required: ["spec"],
              properties: {
                apiVersion: { type: "string" },
                kind: { type: "string" },
                metadata: { type: "object" },
                spec: openapi(spec),
                status: openapi(status),
              },
            },
          },
        },
      ],
    },
  };
}

export const runCrd = () => crd(RUN_KIND, RUN_PLURAL, "cpr", runSpecSchema, runStatusSchema, RUN_PRINTER_COLUMNS);
export const analysisCrd = () => crd(ANALYSIS_KIND, ANALYSIS_PLURAL, "cpa", analysisSpecSchema, analysisStatusSchema, ANALYSIS_PRINTER_COLUMNS);

/** File name in crds/ -> manifest. */
export const CRD_FILES = {
  "codeplane.dev_runs.yaml": runCrd,
  "codeplane.dev_analyses.yaml": analysisCrd,
} as const;
