import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";

// The values table of charts/codeplane/README.md, generated from
// values.schema.json (one description per value, kept where Helm checks it).
// The chart test fails when the README's table is stale; rewrite it with
//   node test/chart/values-doc.ts

const root = new URL("../..", import.meta.url).pathname;
export const CHART_README = path.join(root, "charts/codeplane/README.md");
const SCHEMA = path.join(root, "charts/codeplane/values.schema.json");
const START = "<!-- values:start (generated from values.schema.json by node test/chart/values-doc.ts) -->";
const END = "<!-- values:end -->";

interface Node {
  type?: string | string[];
  description?: string;
  default?: unknown;
  enum?: unknown[];
  properties?: Record<string, Node>;
}

const cell = (s: string) => s.replaceAll("|", "\\|").replaceAll("<", "&lt;").replaceAll("\n", " ");

function defaultCell(node: Node): string {
  if (!("default" in node)) return "";
  const json = JSON.stringify(node.default);
  return json.length > 60 ? "see values.yaml" : `\`${cell(json)}\``;
}

function typeCell(node: Node): string {
  const types = [node.type ?? "object"].flat().join(" or ");
  const choices = node.enum?.filter((v) => v !== "" && typeof v === "string");
  return choices?.length && choices.length <= 8 ? `${types}: ${choices.map((c) => `\`${c}\``).join(", ")}` : types;
}

/** One row per value, leaves first level by level as values.yaml orders them. */
export function valuesTable(schema: Node = JSON.parse(readFileSync(SCHEMA, "utf8"))): string {
  const rows: string[] = ["| value | type | default | description |", "| --- | --- | --- | --- |"];
  const walk = (node: Node, at: string) => {
    if (node.properties && at !== "") {
      // An object the chart shapes: its keys are rows of their own.
      for (const [k, v] of Object.entries(node.properties)) walk(v, `${at}.${k}`);
      return;
    }
    if (node.properties) {
      for (const [k, v] of Object.entries(node.properties)) if (k !== "global") walk(v, k);
      return;
    }
    rows.push(`| \`${at}\` | ${typeCell(node)} | ${defaultCell(node)} | ${cell(node.description ?? "")} |`);
  };
  walk(schema, "");
  return rows.join("\n");
}

/** The README with its table replaced by a fresh one. */
export function withTable(readme: string, table = valuesTable()): string {
  const start = readme.indexOf(START);
  const end = readme.indexOf(END);
  if (start < 0 || end < start) throw new Error(`${CHART_README} has no ${START} ... ${END} section`);
  return `${readme.slice(0, start)}${START}\n\n${table}\n\n${readme.slice(end)}`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  writeFileSync(CHART_README, withTable(readFileSync(CHART_README, "utf8")));
  process.stdout.write(`wrote the values table of ${path.relative(root, CHART_README)}\n`);
}
