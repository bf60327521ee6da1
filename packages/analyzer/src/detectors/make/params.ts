import type { Parameter } from "../../model.ts";
import type { MakeAssignment, MakeRule, ParsedMakefile } from "./parse.ts";
import { evaluate, variableReferences } from "./vars.ts";

// A make target's parameters: the variables assigned in the Makefile that
// its recipe uses, directly, through the recipes of the targets it depends
// on, or through the values of other variables it uses. (A variable that
// only names a prerequisite file is not something a user sets.) Each can be
// overridden on the command line as `make train EPOCHS=20`.

// Variables that steer make itself rather than the work a target does.
const MAKE_INTERNALS = new Set(["SHELL", "MAKE", "MAKEFLAGS", "GNUMAKEFLAGS", "MAKEFILE_LIST", "MAKECMDGOALS", "MAKELEVEL", "CURDIR", "VPATH"]);

const MAX_TARGETS_FOLLOWED = 200;
const MAX_PARAMETERS = 256;

/** Builds the lookups once per Makefile; the returned function gives one target's parameters. */
export function parametersOfTargets(rulesByTarget: ReadonlyMap<string, MakeRule[]>, parsed: ParsedMakefile): (target: string) => Parameter[] {
  const assignmentsByName = new Map<string, MakeAssignment[]>();
  for (const a of parsed.assignments) {
    const list = assignmentsByName.get(a.name);
    if (list) list.push(a);
    else assignmentsByName.set(a.name, [a]);
  }
  const ruleReferences = new Map<MakeRule, string[]>();
  const referencesOf = (rule: MakeRule): string[] => {
    let refs = ruleReferences.get(rule);
    if (!refs) {
      refs = [...new Set(rule.recipe.flatMap(variableReferences))];
      ruleReferences.set(rule, refs);
    }
    return refs;
  };

  return (target) => {
    const referenced = new Set<string>();
    const visited = new Set<string>([target]);
    const queue = [target];
    for (let next = 0; next < queue.length && visited.size <= MAX_TARGETS_FOLLOWED; next++) {
      for (const rule of rulesByTarget.get(queue[next]!) ?? []) {
        for (const name of referencesOf(rule)) referenced.add(name);
        for (const p of rule.prerequisites) {
          if (!visited.has(p) && rulesByTarget.has(p)) {
            visited.add(p);
            queue.push(p);
          }
        }
      }
    }
    // Variables used in the values of used variables: `ARGS = --epochs $(EPOCHS)`.
    const pending = [...referenced];
    while (pending.length) {
      for (const a of assignmentsByName.get(pending.pop()!) ?? []) {
        for (const inner of variableReferences(a.value)) {
          if (!referenced.has(inner)) {
            referenced.add(inner);
            pending.push(inner);
          }
        }
      }
    }

    const params: { seq: number; parameter: Parameter }[] = [];
    for (const name of referenced) {
      const all = assignmentsByName.get(name);
      if (!all || MAKE_INTERNALS.has(name) || !/^[A-Za-z_][A-Za-z0-9_.-]*$/.test(name)) continue;
      const applicable = all.filter((a) => a.forTargets === null || a.forTargets.includes(target));
      params.push({ seq: all[0]!.seq, parameter: toParameter(name, applicable, all) });
    }
    params.sort((a, b) => a.seq - b.seq);
    return params.slice(0, MAX_PARAMETERS).map((p) => p.parameter);
  };
}

function toParameter(name: string, applicable: MakeAssignment[], all: MakeAssignment[]): Parameter {
  const value = applicable.length ? evaluate(applicable) : ({ known: false } as const);
  const description = all.find((a) => a.comment)?.comment ?? null;
  const base = { name, cli_option: `${name}=`, choices: null, description, required: false };
  if (!value.known || value.text.length > 4096) return { ...base, value: null, category: "string" };
  const text = value.text;
  if (/^-?(0|[1-9][0-9]*)$/.test(text) && Number.isSafeInteger(Number(text))) return { ...base, value: Number(text), category: "integer" };
  if (/^-?([0-9]+\.[0-9]*|\.[0-9]+|[0-9]+)([eE][-+]?[0-9]+)?$/.test(text) && Number.isFinite(Number(text)) && !/^-?0[0-9]/.test(text)) {
    return { ...base, value: Number(text), category: "number" };
  }
  return { ...base, value: text, category: "string" };
}
