import type { ValidationIssue } from "../domain/errors.ts";

/** Where a REST route reads a field from; a tool has only its arguments. */
const REST_LOCATIONS = new Set(["body", "query", "path", "header"]);

/**
 * A validation location of the domain (written for the REST API, e.g.
 * `["body", "analyzed_experiment"]`) as the tool's own argument
 * (`experiment_id`): the REST location goes, and a field the tool takes
 * under another name is renamed (`renames`: REST field to argument). Nested
 * fields keep their path (`parameters.lr`).
 */
export function argumentOf(loc: readonly (string | number)[], renames: Readonly<Record<string, string>> = {}): string {
  const rest = loc.length > 1 && typeof loc[0] === "string" && REST_LOCATIONS.has(loc[0]) ? loc.slice(1) : [...loc];
  return rest.map((part, i) => (i === 0 && typeof part === "string" ? (renames[part] ?? part) : String(part))).join(".");
}

/** What a REST route's message points at, as the tool that does it. */
const REST_TO_TOOLS: readonly [RegExp, string][] = [[/POST \/v1\/environment-variables/g, "the set_environment_variable tool"]];

/** A validation failure's text for a tool: `Validation failed: experiment_id: Value error, ...`, issues joined by `; `. */
export function validationText(issues: readonly ValidationIssue[], renames?: Readonly<Record<string, string>>): string {
  const text = issues.map((i) => `${argumentOf(i.loc, renames)}: ${i.msg}`).join("; ");
  return `Validation failed: ${REST_TO_TOOLS.reduce((s, [from, to]) => s.replace(from, to), text)}`;
}
