import type { Parameter } from "../../model.ts";
import { descendants, type Node } from "../../syntax.ts";
import { callArguments, calleeName, clip, literal, objectOrConst } from "./literals.ts";

// Options declared for `node:util`'s parseArgs: `parseArgs({ options: { name:
// { type: "string" | "boolean", short, default } } })`, the options object
// written inline or as a top-level constant of the same file.

export function parseArgsParameters(root: Node): Parameter[] {
  const out: Parameter[] = [];
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
        out.push(param(name, typeof def?.value === "string" ? clip(def.value, 4096) : null, "string"));
      }
    }
  }
  return out;
}

function param(name: string, value: string | boolean | null, category: "flag" | "string"): Parameter {
  return { name: clip(name, 256), value, category, cli_option: clip(`--${name}`, 256), choices: null, description: null, required: false };
}
