import type { Parameter, ParameterCategory } from "../../model.ts";
import { descendants, type Node } from "../../syntax.ts";
import { callArguments, calleeName, clip, literal, objectOrConst, stringValue, unwrap } from "./literals.ts";

// Options declared for `node:util`'s parseArgs: `parseArgs({ options: { name:
// { type: "string" | "boolean", short, default } } })`, the options object
// written inline or as a top-level constant of the same file. parseArgs only
// knows strings, so a program that wants a number converts the value itself
// (`parseInt(values.count, 10)`, `Number(values["error-rate"])`, `+values.rate`):
// such an option is an integer or a number, its default converted the same way.

export function parseArgsParameters(root: Node): Parameter[] {
  const out: Parameter[] = [];
  let converted: Map<string, ParameterCategory> | null = null;
  for (const call of descendants(root, "call_expression")) {
    if (calleeName(call) !== "parseArgs") continue;
    const config = objectOrConst(root, callArguments(call)[0]);
    const options = objectOrConst(root, config?.get("options"));
    for (const [name, value] of options ?? []) {
      const spec = objectOrConst(root, value);
      if (!spec) continue;
      const type = literal(spec.get("type"))?.value;
      const def = literal(spec.get("default"));
      if (type === "boolean") {
        // parseArgs refuses `--name=false`, so a switch is all a run can pass.
        out.push(param(name, typeof def?.value === "boolean" ? def.value : false, "flag"));
      } else if (type === "string") {
        converted ??= numericConversions(root);
        const category = converted.get(name);
        const text = typeof def?.value === "string" ? def.value : null;
        if (category) out.push(param(name, text === null ? null : numberOf(text, category), category));
        else out.push(param(name, text === null ? null : clip(text, 4096), "string"));
      }
    }
  }
  return out;
}

/** What `parseInt` and `Number` make of a default: null when it is not a number of that kind. */
function numberOf(text: string, category: ParameterCategory): number | null {
  const n = category === "integer" ? (/^\s*[+-]?\d+\s*$/.test(text) ? Number(text) : NaN) : text.trim() === "" ? NaN : Number(text);
  return Number.isFinite(n) && (category !== "integer" || Number.isSafeInteger(n)) ? n : null;
}

const CONVERTERS: Record<string, ParameterCategory> = { parseInt: "integer", parseFloat: "number", Number: "number" };

/**
 * The option names whose value the file converts to a number: the property
 * read inside `parseInt(...)`, `Number.parseInt(...)`, `parseFloat(...)`,
 * `Number(...)` or after a unary `+` (`values.rate`, `args.values["error-rate"]`).
 */
export function numericConversions(root: Node): Map<string, ParameterCategory> {
  const out = new Map<string, ParameterCategory>();
  const record = (node: Node | null | undefined, category: ParameterCategory) => {
    const n = unwrap(node);
    const key =
      n?.type === "member_expression"
        ? (n.childForFieldName("property")?.text ?? null)
        : n?.type === "subscript_expression"
          ? stringValue(n.childForFieldName("index"))
          : null;
    // The first conversion wins: parseInt and Number of the same option is an integer read twice.
    if (key && !out.has(key)) out.set(key, category);
  };
  for (const n of descendants(root, ["call_expression", "unary_expression"])) {
    if (n.type === "unary_expression") {
      if (n.childForFieldName("operator")?.text === "+") record(n.childForFieldName("argument"), "number");
      continue;
    }
    const category = CONVERTERS[calleeName(n) ?? ""];
    if (category) record(callArguments(n)[0], category);
  }
  return out;
}

function param(name: string, value: string | number | boolean | null, category: ParameterCategory): Parameter {
  return { name: clip(name, 256), value, category, cli_option: clip(`--${name}`, 256), choices: null, description: null, required: false };
}
