import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { parse } from "yaml";
import type { z } from "zod";
import { CONFIG_REFERENCE, type SettingDoc } from "./config-reference.ts";
import { envSchema } from "./config.ts";

// docs/operators/configuration.md, generated: one row per variable of the
// config schema, with the schema's own default, the meaning written in
// config-reference.ts and the Helm value that sets it (the chart's `config`
// map, read from values.yaml, or what config-reference.ts names). Rewrite it
// with `npm run docs:config`; src/config-doc.test.ts fails when it is stale.

const ROOT = path.resolve(import.meta.dirname, "..");
export const CONFIG_PAGE = path.join(ROOT, "docs/operators/configuration.md");
export const CHART_VALUES = path.join(ROOT, "charts/codeplane/values.yaml");

export interface Setting {
  name: string;
  /** The schema's `.default()`, found through pipes; absent when the schema has none. */
  default?: { value: unknown };
}

/** The default a zod schema gives before any transform: `.default(x)` itself or inside a pipe's input. */
export function schemaDefault(schema: z.ZodType): { value: unknown } | undefined {
  const def = schema._zod.def as { type: string; defaultValue?: unknown; in?: z.ZodType };
  if (def.type === "default") return { value: def.defaultValue };
  if (def.type === "pipe" && def.in) return schemaDefault(def.in);
  return undefined;
}

/** The variables of the config schema, in its order. */
export function schemaSettings(shape: Record<string, z.ZodType> = envSchema.shape): Setting[] {
  return Object.entries(shape).map(([name, schema]) => {
    const d = schemaDefault(schema);
    return d ? { name, default: d } : { name };
  });
}

/** The chart's `config` map (values.yaml), as strings: what the chart passes as environment variables. */
export function chartConfig(valuesYaml: string = readFileSync(CHART_VALUES, "utf8")): Record<string, string> {
  const values = parse(valuesYaml) as { config?: Record<string, unknown> };
  return Object.fromEntries(
    Object.entries(values.config ?? {}).map(([k, v]) => [
      k,
      v === null || v === undefined ? "" : typeof v === "object" ? JSON.stringify(v) : String(v as string | number | boolean),
    ]),
  );
}

const cell = (s: string) => s.replaceAll("|", "\\|").replaceAll("\n", " ");
const code = (s: string) => `\`${s}\``;

function defaultCell(setting: Setting, doc: SettingDoc | undefined): string {
  const note = doc?.defaultNote ? ` ${doc.defaultNote}` : "";
  if (!setting.default) return `${doc?.default ?? "unset"}${note}`;
  const v = setting.default.value;
  return `${v === "" ? "empty" : code(String(v))}${note}`;
}

function helmCell(name: string, doc: SettingDoc | undefined, chart: Readonly<Record<string, string>>, binaryDefault: string | undefined): string {
  if (doc?.helmNone) return `not set (${doc.helmNone})`;
  if (doc?.helmSecret) return `Secret ${code(doc.helmSecret)}`;
  if (doc?.helmComputed) return `set by the chart: ${doc.helmComputed}`;
  if (doc?.helm) return code(doc.helm);
  if (name in chart) {
    const v = chart[name]!;
    return v !== "" && v !== binaryDefault ? `${code(`config.${name}`)} (chart: ${code(v)})` : code(`config.${name}`);
  }
  return "not set";
}

/** The whole page: a short preamble and the table. Pure. */
export function renderConfigReference(
  settings: readonly Setting[],
  reference: Readonly<Record<string, SettingDoc>>,
  chart: Readonly<Record<string, string>>,
): string {
  const rows = settings.map((s) => {
    const doc = reference[s.name];
    const binaryDefault = s.default ? String(s.default.value) : undefined;
    return `| ${code(s.name)} | ${cell(defaultCell(s, doc))} | ${cell(doc?.meaning ?? "")} | ${cell(helmCell(s.name, doc, chart, binaryDefault))} |`;
  });
  return `# Configuration reference

<!-- Generated from src/config.ts (the schema and its defaults), src/config-reference.ts
     (the meanings) and charts/codeplane/values.yaml by \`npm run docs:config\`. Do not edit. -->

Every setting is an environment variable, read once at start: a bad value
stops the process with a message naming the variable, and an empty value
counts as unset.

With Helm, a setting is a value of its own or a key of \`config\` (strings;
empty means the binary's default; "chart:" is the chart's own default where it
differs from the binary's). The chart computes the rest from the values named
below, and reads secrets from the Secrets you name (\`*.existingSecret\`); see
[Install with Helm](helm.md). The egress settings are explained in
[Run isolation](isolation.md), the GitHub App's in
[GitHub integration](../users/github.md), the OAuth and OpenID Connect ones
in [OAuth 2.0](../users/oauth.md).

| variable | default | meaning | Helm value |
| --- | --- | --- | --- |
${rows.join("\n")}
`;
}

/** The page as it should be now. */
export function currentConfigReference(): string {
  return renderConfigReference(schemaSettings(), CONFIG_REFERENCE, chartConfig());
}

if (import.meta.url === `file://${process.argv[1]}`) writeFileSync(CONFIG_PAGE, currentConfigReference());
