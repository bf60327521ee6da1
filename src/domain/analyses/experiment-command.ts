import type { Experiment, Parameter, ParameterValue } from "@codeplane/analyzer";
import type { ValidationIssue } from "../errors.ts";

// Pure: an analysed experiment and a run's parameter overrides in, the argv
// to run out (or the issues, in the API's 422 vocabulary, each naming the
// parameter). Only the parameters the caller gave are passed: defaults are
// the program's own, so passing them again could only disagree with it. A
// parameter the program reads from an environment variable (`env_var`, a web
// server's PORT) goes before the command as `env NAME=value`.

export interface ExperimentCommand {
  command: string[];
  /** Every parameter's effective value (defaults with the overrides applied), for run_config. */
  parameters: Record<string, ParameterValue>;
}

const loc = (name: string) => ["body", "parameters", name];

function coerce(p: Parameter, raw: ParameterValue): { value: ParameterValue } | ValidationIssue {
  if (raw === null) return { value: null };
  switch (p.category) {
    case "integer": {
      const n = typeof raw === "string" && /^[+-]?\d+$/.test(raw.trim()) ? Number(raw) : raw;
      if (typeof n !== "number" || !Number.isSafeInteger(n)) {
        return { loc: loc(p.name), msg: "Input should be a valid integer, unable to parse string as an integer", type: "int_parsing" };
      }
      return { value: n };
    }
    case "number": {
      const n = typeof raw === "string" && raw.trim() !== "" ? Number(raw) : raw;
      if (typeof n !== "number" || !Number.isFinite(n))
        return { loc: loc(p.name), msg: "Input should be a valid number, unable to parse string as a number", type: "float_parsing" };
      return { value: n };
    }
    case "boolean":
    case "flag": {
      if (typeof raw === "boolean") return { value: raw };
      if (typeof raw === "string" && /^(true|false)$/i.test(raw)) return { value: raw.toLowerCase() === "true" };
      return { loc: loc(p.name), msg: "Input should be a valid boolean, unable to interpret input", type: "bool_parsing" };
    }
    case "string":
    case "path":
      if (typeof raw !== "string") return { loc: loc(p.name), msg: "Input should be a valid string", type: "string_type" };
      return { value: raw };
  }
}

function render(p: Parameter, value: Exclude<ParameterValue, null>): string[] {
  if (p.cli_option === null) return [String(value)];
  const words = p.cli_option.trim().split(/\s+/);
  if (p.category === "flag") return value === true ? words : [];
  const last = words[words.length - 1]!;
  return last.endsWith("=") ? [...words.slice(0, -1), `${last}${String(value)}`] : [...words, String(value)];
}

export function buildExperimentCommand(experiment: Experiment, overrides: Record<string, ParameterValue>): ExperimentCommand | ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const known = new Map(experiment.parameters.map((p) => [p.name, p]));
  for (const name of Object.keys(overrides)) {
    if (!known.has(name)) {
      const names = [...known.keys()];
      issues.push({
        loc: loc(name),
        msg: `Value error, the experiment has no parameter '${name}'${names.length ? ` (it has ${names.map((n) => `'${n}'`).join(", ")})` : " (it takes none)"}`,
        type: "value_error",
      });
    }
  }
  const options: string[] = [];
  const env: string[] = [];
  const positionals: { p: Parameter; value: ParameterValue; given: boolean }[] = [];
  const effective: Record<string, ParameterValue> = {};
  for (const p of experiment.parameters) {
    const given = Object.hasOwn(overrides, p.name);
    const coerced = given ? coerce(p, overrides[p.name]!) : { value: p.value };
    if ("loc" in coerced) {
      issues.push(coerced);
      continue;
    }
    const value = coerced.value;
    effective[p.name] = value;
    if (given && value !== null && p.choices && !p.choices.some((c) => String(c) === String(value))) {
      issues.push({
        loc: loc(p.name),
        msg: `Input should be ${p.choices
          .map((c) => `'${String(c)}'`)
          .join(", ")
          .replace(/, ([^,]*)$/, " or $1")}`,
        type: "enum",
      });
      continue;
    }
    if (value === null && p.required) {
      issues.push({ loc: loc(p.name), msg: "Field required", type: "missing" });
      continue;
    }
    if (p.env_var) {
      if (given && value !== null) env.push(`${p.env_var}=${String(value)}`);
    } else if (p.cli_option === null) positionals.push({ p, value, given });
    else if (given && value !== null) options.push(...render(p, value));
  }
  // Positionals are told apart by position: up to the last one given, each
  // must be passed (with its default when the caller left it out).
  const lastGiven = positionals.findLastIndex((x) => x.given && x.value !== null);
  const args: string[] = [];
  for (const x of positionals.slice(0, lastGiven + 1)) {
    if (x.value === null) issues.push({ loc: loc(x.p.name), msg: `Field required (a later positional parameter is given)`, type: "missing" });
    else args.push(...render(x.p, x.value));
  }
  if (issues.length) return issues;
  // Options first: Go's flag package and getopts stop at the first positional.
  return { command: [...(env.length ? ["env", ...env] : []), ...experiment.command, ...options, ...args], parameters: effective };
}
