import type { Detector } from "../../detector.ts";
import type { Experiment, Parameter } from "../../model.ts";
import { parseMakefile, type MakeRule, type ParsedMakefile } from "./parse.ts";
import { parametersOfTargets } from "./params.ts";

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
    const readme = readmeOf(ctx, dir);
    const targets = targetExperiments(parsed, dir, () => ctx.outOfTime());
    const used = new Set(targets.flatMap((e) => e.parameters.map((p) => p.name)));
    const tested = conditionalValues(text);
    experiments.push(...targets.map((e) => withKnobs(e, parsed, tested, readme, used)));
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

function readmeOf(ctx: Parameters<Detector>[0], dir: string): string {
  for (const name of ["README.md", "README", "README.rst", "README.txt", "readme.md"]) {
    const path = dir === "" ? name : `${dir}/${name}`;
    if (ctx.byPath.has(path)) return ctx.readText(path) ?? "";
  }
  return "";
}

/**
 * The toolchain's own variables (compiler, flags, object lists): what a
 * recipe uses to build, not a knob a user turns, unless the README tells
 * users to set it.
 */
const TOOLCHAIN =
  /^(CC|CXX|CPP|LD|AR|AS|FC|NVCC|HIPCC|MPICC|MPICXX|RANLIB|STRIP|RM|MKDIR|INSTALL|OBJS?|SRCS?|SOURCES|OBJECTS|HEADERS|DEPS|INC|INCS|INCLUDES|LIBS|LDLIBS|TARGET|BIN|EXE|[A-Z0-9_]*FLAGS|[A-Z]+_(OBJS?|SRCS?|DEPS|LIBS|INCLUDES?)|(CUDA|ROCM|HIP|MKL|OPENBLAS|CUDNN|NCCL|MPI)_(HOME|PATH|DIR|ROOT|INC|LIB|INCLUDE))$/;

const CHORE_TARGETS = new Set(["clean", "distclean", "help", "format", "fmt", "lint", "check", "install", "uninstall", "deps", "setup"]);

/**
 * A target's parameters without the toolchain's variables, plus the
 * Makefile's documented knobs: `NAME ?= default` variables that a
 * conditional tests (`ifeq ($(USE_CUDA),1)`) or that the README tells users
 * to set (`make USE_CUDA=1`), and that no recipe uses (those are already the
 * parameters of the targets that use them). They steer the whole build, so
 * every target that does work takes them; the values a conditional compares
 * them with (and the default) are their choices.
 */
function withKnobs(e: Experiment, parsed: ParsedMakefile, tested: ReadonlyMap<string, Set<string>>, readme: string, used: ReadonlySet<string>): Experiment {
  const documented = (name: string) => readme.includes(`${name}=`) && new RegExp(`(^|[^A-Za-z0-9_])${name.replace(/[.]/g, "\\.")}=`).test(readme);
  const parameters = e.parameters.filter((p) => !TOOLCHAIN.test(p.name) || documented(p.name));
  if (CHORE_TARGETS.has(e.title)) return { ...e, parameters };
  for (const a of parsed.assignments) {
    if (a.op !== "?=" || a.forTargets !== null || used.has(a.name) || parameters.some((p) => p.name === a.name)) continue;
    if (!tested.has(a.name) && !documented(a.name)) continue;
    const value = a.value.trim();
    const compared = [...(tested.get(a.name) ?? [])];
    const choices = compared.length && !/\$/.test(value) ? [...new Set([value, ...compared])] : null;
    parameters.push(knob(a.name, value, choices, a.comment));
  }
  return { ...e, parameters };
}

function knob(name: string, value: string, choices: string[] | null, description: string | null): Parameter {
  const base = { name, cli_option: `${name}=`, description, required: false };
  if (/\$/.test(value)) return { ...base, value: null, category: "string", choices: null };
  const numeric = (choices ?? [value]).every((c) => /^-?(0|[1-9][0-9]*)$/.test(c));
  if (numeric && value !== "") return { ...base, value: Number(value), category: "integer", choices: choices ? choices.map(Number) : null };
  return { ...base, value, category: "string", choices };
}

/** Variable → the literal values conditionals compare it with: `ifeq ($(X),1)`, `ifneq "$(X)" "fp16"`, `ifdef X` (none). */
function conditionalValues(text: string): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  const add = (name: string, v: string | null) => {
    const set = out.get(name) ?? new Set<string>();
    if (v !== null && v !== "" && !v.includes("$")) set.add(v);
    out.set(name, set);
  };
  for (const line of text.split("\n")) {
    const m = /^\s*(?:else\s+)?(ifeq|ifneq)\s*(?:\(\s*([^,]*?)\s*,\s*([^)]*?)\s*\)|["']([^"']*)["']\s+["']([^"']*)["'])\s*$/.exec(line);
    if (m) {
      const [a, b] = m[2] !== undefined ? [m[2], m[3]!] : [m[4]!, m[5]!];
      const va = /^\$[({]([A-Za-z_][A-Za-z0-9_]*)[)}]$/.exec(a.trim());
      const vb = /^\$[({]([A-Za-z_][A-Za-z0-9_]*)[)}]$/.exec(b.trim());
      if (va) add(va[1]!, b.trim());
      else if (vb) add(vb[1]!, a.trim());
      continue;
    }
    const d = /^\s*(?:else\s+)?(ifdef|ifndef)\s+([A-Za-z_][A-Za-z0-9_]*)\s*$/.exec(line);
    if (d) add(d[2]!, null);
  }
  return out;
}
