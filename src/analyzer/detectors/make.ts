import type { Detector } from "../detector.ts";
import type { Experiment } from "../model.ts";
import { parseMakefile, type MakeRule, type ParsedMakefile } from "./make-parse.ts";
import { parametersOfTargets } from "./make-params.ts";

// Makefile targets a user can run: the phony ones and those with a recipe,
// minus make's special targets, pattern rules and targets that name the file
// they build. `make -C dir target` for Makefiles below the root.

// Make's own order of preference when a folder has more than one.
const MAKEFILE_NAMES = ["GNUmakefile", "makefile", "Makefile"];
// A generated Makefile with thousands of targets is not a menu a person picks from.
const MAX_TARGETS_PER_MAKEFILE = 500;

export const detectMake: Detector = (ctx) => {
  const chosen = new Map<string, string>();
  for (const f of ctx.files) {
    const slash = f.path.lastIndexOf("/");
    const dir = slash < 0 ? "" : f.path.slice(0, slash);
    const rank = MAKEFILE_NAMES.indexOf(f.path.slice(slash + 1));
    if (rank < 0) continue;
    const current = chosen.get(dir);
    if (current === undefined || rank < MAKEFILE_NAMES.indexOf(current.slice(current.lastIndexOf("/") + 1))) chosen.set(dir, f.path);
  }
  const experiments: Experiment[] = [];
  for (const [dir, path] of [...chosen].sort((a, b) => (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0))) {
    if (ctx.outOfTime()) break;
    if (/\s/.test(path)) continue;
    const text = ctx.readText(path);
    if (text === null) continue;
    const parsed = parseMakefile(text, { path, dir, readInclude: (p) => (ctx.byPath.has(p) ? ctx.readText(p) : null) });
    experiments.push(...targetExperiments(parsed, dir, ctx.outOfTime));
  }
  return { experiments, envVars: [] };
};

function targetExperiments(parsed: ParsedMakefile, dir: string, outOfTime: () => boolean): Experiment[] {
  const rulesByTarget = new Map<string, MakeRule[]>();
  for (const rule of parsed.rules) {
    for (const target of rule.targets) {
      const list = rulesByTarget.get(target);
      if (list) list.push(rule);
      else rulesByTarget.set(target, [rule]);
    }
  }
  const parametersOf = parametersOfTargets(rulesByTarget, parsed);
  const out: Experiment[] = [];
  for (const [target, rules] of rulesByTarget) {
    if (out.length >= MAX_TARGETS_PER_MAKEFILE || outOfTime()) break;
    if (!isRunnable(target, rules, parsed.phony)) continue;
    const command = dir === "" ? ["make", target] : ["make", "-C", dir, target];
    out.push({
      id: dir === "" ? `make:${target}` : `make:${dir}:${target}`,
      title: target,
      description: rules.find((r) => r.description)?.description ?? null,
      entry_point: command.join(" "),
      command,
      language: "make",
      kind: "make-target",
      path: rules[0]!.file,
      inputs: [],
      outputs: [],
      parameters: parametersOf(target),
    });
  }
  return out;
}

export function isRunnable(target: string, rules: readonly MakeRule[], phony: ReadonlySet<string>): boolean {
  if (target.startsWith(".") || /[%$/\\]/.test(target) || target.length > 200) return false;
  if (phony.has(target)) return true;
  // `foo.o`, `data.csv`: a file the rule builds, not something to run.
  if (/\.[A-Za-z0-9]+$/.test(target)) return false;
  return rules.some((r) => r.recipe.some((line) => line.trim() !== ""));
}
