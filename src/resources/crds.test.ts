import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { renderCrds } from "./render.ts";

describe("CRD manifests", () => {
  const rendered = renderCrds();

  it.each(["crds/", "charts/codeplane/files/crds/"].flatMap((dir) => Object.keys(rendered).map((f) => [dir, f] as const)))(
    "%s%s matches the zod schemas (run `npm run crds` if not)",
    (dir, file) => {
      const committed = readFileSync(new URL(`../../${dir}${file}`, import.meta.url), "utf8");
      expect(committed).toBe(rendered[file]);
    },
  );

  it("are structural: every object node has a type and none forbids extra properties", () => {
    const walk = (node: unknown, path: string): void => {
      if (!node || typeof node !== "object") return;
      const n = node as Record<string, unknown>;
      if ("properties" in n || "items" in n) expect(n.type, path).toBeDefined();
      expect(n.additionalProperties, path).not.toBe(false);
      // The API server refuses unions (anyOf branches with types) and nullable enums.
      expect(n.anyOf, path).toBeUndefined();
      expect(n.oneOf, path).toBeUndefined();
      // A node without a type must keep unknown fields, or it cannot hold anything.
      if (/\.(properties\.[^.]+|additionalProperties|items)$/.test(path) && !Array.isArray(n) && !("type" in n))
        expect(n["x-kubernetes-preserve-unknown-fields"], path).toBe(true);
      for (const [k, v] of Object.entries(n)) walk(v, `${path}.${k}`);
    };
    for (const text of Object.values(rendered)) {
      const crd = parse(text);
      walk(crd.spec.versions[0].schema.openAPIV3Schema, "schema");
    }
  });

  it("follow the contract's names", () => {
    const runs = parse(rendered["codeplane.dev_runs.yaml"]!);
    expect(runs.metadata.name).toBe("runs.codeplane.dev");
    expect(runs.spec.names).toMatchObject({ kind: "Run", plural: "runs", shortNames: ["cpr"], categories: ["codeplane"] });
    expect(runs.spec.versions[0].subresources).toEqual({ status: {} });
    expect(runs.spec.versions[0].additionalPrinterColumns.map((c: { name: string }) => c.name)).toEqual([
      "Status",
      "Repository",
      "Commit",
      "Queued",
      "Compute",
      "Exit",
      "Age",
    ]);
    const analyses = parse(rendered["codeplane.dev_analyses.yaml"]!);
    expect(analyses.spec.names).toMatchObject({ kind: "Analysis", plural: "analyses", shortNames: ["cpa"], categories: ["codeplane"] });
  });
});
