import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { CONFIG_PAGE, chartConfig, currentConfigReference, renderConfigReference, schemaDefault, schemaSettings } from "./config-doc.ts";
import { CONFIG_REFERENCE } from "./config-reference.ts";

// The configuration reference is generated (npm run docs:config); these tests
// keep it, the schema, the meanings and the chart in step.

const CHART = path.resolve(import.meta.dirname, "../charts/codeplane");
const templates = readdirSync(path.join(CHART, "templates"))
  .filter((f) => f.endsWith(".tpl") || f.endsWith(".yaml"))
  .map((f) => readFileSync(path.join(CHART, "templates", f), "utf8"))
  .join("\n");
const deployment = readFileSync(path.join(CHART, "templates/deployment.yaml"), "utf8");
const valuesSchema = JSON.parse(readFileSync(path.join(CHART, "values.schema.json"), "utf8")) as SchemaNode;
interface SchemaNode {
  description?: string;
  properties?: Record<string, SchemaNode>;
}

/** The text of a named template (`{{ define "name" }}` up to the next define). */
function defineBody(name: string): string {
  const at = templates.indexOf(`define "${name}"`);
  if (at < 0) return "";
  const next = templates.indexOf('define "', at + 1);
  return templates.slice(at, next < 0 ? undefined : next);
}

/** What the chart sets a variable from: its env entry's value, with named templates and `$vars` expanded. */
function envSource(name: string): string {
  const line = deployment.split("\n").find((l) => new RegExp(`^\\s*- \\{ name: ${name}, value: `).test(l));
  if (!line) return "";
  let text = line;
  for (let round = 0; round < 3; round++) {
    for (const [, inc] of text.matchAll(/include "([^"]+)"/g)) text += `\n${defineBody(inc!)}`;
    for (const [, v] of text.matchAll(/(\$[a-zA-Z]+)\b/g)) {
      const def = deployment.split("\n").find((l) => l.includes(`${v} :=`));
      if (def && !text.includes(def)) text += `\n${def}`;
    }
  }
  return text;
}

const schemaAt = (dotted: string): SchemaNode | undefined =>
  dotted.split(".").reduce<SchemaNode | undefined>((node, key) => node?.properties?.[key], valuesSchema);

const settings = schemaSettings();
const names = settings.map((s) => s.name);
const chart = chartConfig();

describe("the configuration reference", () => {
  it("has a meaning for every variable of the config schema, and for nothing else", () => {
    expect(
      names.filter((n) => !CONFIG_REFERENCE[n]?.meaning.trim()),
      "add a line to src/config-reference.ts",
    ).toEqual([]);
    expect(
      Object.keys(CONFIG_REFERENCE).filter((n) => !names.includes(n)),
      "not in envSchema",
    ).toEqual([]);
  });

  it("words a default only where the schema has none (the schema's own is shown otherwise)", () => {
    expect(settings.filter((s) => s.default && CONFIG_REFERENCE[s.name]?.default !== undefined).map((s) => s.name)).toEqual([]);
  });

  it("gives every variable exactly one way the chart sets it (or says why it does not)", () => {
    const ways = (n: string) => {
      const d = CONFIG_REFERENCE[n]!;
      return [n in chart, d.helm !== undefined, d.helmSecret !== undefined, d.helmNone !== undefined, d.helmComputed !== undefined].filter(Boolean).length;
    };
    expect(names.filter((n) => ways(n) !== 1)).toEqual([]);
  });

  it("names only variables of the schema in the chart's config map, which the Deployment passes on", () => {
    expect(Object.keys(chart).filter((k) => !names.includes(k))).toEqual([]);
    expect(deployment).toMatch(/range \$k, \$v := omit \.Values\.config /);
  });

  it.each(names.filter((n) => CONFIG_REFERENCE[n]?.helmComputed))("%s is set by the Deployment from the release itself", (name) => {
    expect(envSource(name), `deployment.yaml sets ${name}`).not.toBe("");
  });

  it.each(names.filter((n) => CONFIG_REFERENCE[n]?.helm))("%s is set by the Deployment from the Helm value the reference names", (name) => {
    const value = CONFIG_REFERENCE[name]!.helm!.replace(/\.\*$/, "");
    expect(envSource(name), `deployment.yaml sets ${name}`).not.toBe("");
    expect(envSource(name)).toContain(`.Values.${value}`);
  });

  it.each(names.filter((n) => CONFIG_REFERENCE[n]?.helmSecret))("%s comes from the Secret the reference names, which the chart documents", (name) => {
    const value = CONFIG_REFERENCE[name]!.helmSecret!;
    expect(deployment).toContain(`secretRef: { name: {{ .Values.${value} }} }`);
    expect(schemaAt(value)?.description ?? "").toContain(name);
  });

  it("is the page docs/operators/configuration.md (npm run docs:config rewrites it)", () => {
    expect(readFileSync(CONFIG_PAGE, "utf8")).toBe(currentConfigReference());
  });
});

describe("schemaDefault", () => {
  it.each([
    ["a default", z.string().default("x"), { value: "x" }],
    [
      "a default before a transform",
      z
        .string()
        .default("")
        .transform((v) => v.length),
      { value: "" },
    ],
    ["a numeric default", z.coerce.number().default(8080), { value: 8080 }],
    ["optional", z.string().optional(), undefined],
    [
      "optional before a transform",
      z
        .string()
        .optional()
        .transform((v) => v ?? "d"),
      undefined,
    ],
  ])("%s", (_what, schema, want) => {
    expect(schemaDefault(schema as z.ZodType)).toEqual(want);
  });
});

describe("renderConfigReference", () => {
  const row = (page: string) => page.split("\n").find((l) => l.startsWith("| `X`"));
  it.each([
    ["the schema's default, the chart's config key", { name: "X", default: { value: 8 } }, { meaning: "m" }, { X: "8" }, "| `X` | `8` | m | `config.X` |"],
    [
      "the chart's own default when it differs",
      { name: "X", default: { value: 8 } },
      { meaning: "m" },
      { X: "9" },
      "| `X` | `8` | m | `config.X` (chart: `9`) |",
    ],
    ["an empty default, a note", { name: "X", default: { value: "" } }, { meaning: "m", defaultNote: "(none)" }, {}, "| `X` | empty (none) | m | not set |"],
    [
      "a worded default, a Secret",
      { name: "X" },
      { meaning: "m", default: "derived", helmSecret: "s.existingSecret" },
      {},
      "| `X` | derived | m | Secret `s.existingSecret` |",
    ],
    ["unset, a value of its own, a pipe escaped", { name: "X" }, { meaning: "a|b", helm: "runs.x" }, {}, "| `X` | unset | a\\|b | `runs.x` |"],
    ["not set by the chart", { name: "X" }, { meaning: "m", helmNone: "why" }, { X: "" }, "| `X` | unset | m | not set (why) |"],
  ])("%s", (_what, setting, doc, chartValues, want) => {
    expect(row(renderConfigReference([setting], { X: doc }, chartValues))).toBe(want);
  });
});
