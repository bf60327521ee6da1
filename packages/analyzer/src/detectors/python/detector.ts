import type { AnalyzerContext, Detector } from "../../detector.ts";
import { EnvUseSet } from "../../env-rules.ts";
import type { EnvVarUse, Experiment, ExperimentKind } from "../../model.ts";
import { entryFacts, mainBlock, pathValues, runsOnImport, type EntryFacts } from "./entry.ts";
import { envVarUses, mayReadEnvironment } from "./env.ts";
import { docstring } from "./literals.ts";
import { helperCalls, helperOptions, type HelperCall, type HelperOptions } from "./helpers.ts";
import { procfileExperiments, runsDjangoCommands, runserverExperiment, webApp, webExperiment, type WebApp } from "./web.ts";
import { addParameterPaths, fileAccesses } from "./io.ts";
import { launched, launchOf, readmeFolderRuns, type LaunchFacts, type RepoView } from "./launch.ts";
import { uniqueParameters } from "./params.ts";
import { readImports, type FromImport } from "./names.ts";
import { children, descendants, type Node } from "../../syntax.ts";

// Python: every file with a top-level `if __name__ == "__main__":` block is a
// script (`python3 path`); every package folder with a __main__.py is a module
// (`python3 -m pkg`). Every non-test file is read for environment variables and
// for the well-known libraries it imports.

const FRAMEWORKS: Record<string, string> = {
  torch: "PyTorch",
  tensorflow: "TensorFlow",
  jax: "JAX",
  sklearn: "scikit-learn",
  transformers: "Hugging Face Transformers",
  pandas: "pandas",
  numpy: "NumPy",
  fastapi: "FastAPI",
  flask: "Flask",
  django: "Django",
  streamlit: "Streamlit",
  click: "Click",
  lightning: "PyTorch Lightning",
  pytorch_lightning: "PyTorch Lightning",
};

const FRAMEWORK_MODULES = Object.keys(FRAMEWORKS);

export function frameworksOf(modules: readonly string[]): string[] {
  return modules.map((m) => FRAMEWORKS[m.split(".")[0]!]).filter((f): f is string => f !== undefined);
}

/**
 * Folders of test code and test data: scripts and notebooks there are fixtures
 * for the tests, not something a user runs.
 */
export const TEST_FOLDER = /^(tests?|testing|test[-_][^/]*|[^/]*[-_]tests?|__tests__|fixtures?|__fixtures__|testdata|test[-_]?data)$/i;

export const inTestFolder = (path: string): boolean =>
  path
    .split("/")
    .slice(0, -1)
    .some((d) => TEST_FOLDER.test(d));

/** Test code reads variables the test runner sets; it says little about what running the project needs. */
export function isTestFile(path: string): boolean {
  const parts = path.split("/");
  const base = parts.pop()!;
  return parts.some((p) => p === "tests" || p === "test") || /^test_.*\.py$/.test(base) || /_test\.py$/.test(base) || base === "conftest.py";
}

const IDENTIFIER = /^[\p{L}_][\p{L}\p{N}_]*$/u;

/** `a/b/__main__.py` → "a.b" when every folder is an importable name; null otherwise. */
function mainPackage(path: string): string | null {
  const parts = path.split("/");
  if (parts.pop() !== "__main__.py" || parts.length === 0 || !parts.every((p) => IDENTIFIER.test(p))) return null;
  return parts.join(".");
}

interface FileFacts {
  modules: string[];
  /** Only importing it runs a command line (no main block): a shared options module if another file imports it. */
  onImport: boolean;
  envVars: EnvVarUse[];
  entry: EntryFacts | null;
  /** For a __main__.py: the modules it imports names from, to look in when it declares no parameters itself. */
  imported: { candidates: string[]; names: Set<string> }[];
  /** Calls to functions of other modules, where the options may be parsed (`args = get_args()`). */
  helpers: HelperCall[];
  /** Not runnable by itself: an entry only if a top-level call reaches a helper that parses the command line. */
  onlyIfHelperParses: boolean;
  /** A Flask or FastAPI application the module defines, for a file a server runs. */
  web: WebApp | null;
  /** The module docstring of a web application's file. */
  webDoc: string | null;
  /** A manage.py that hands Django its command line. */
  django: boolean;
  /** What tells where a script in a sub-folder must be started from. */
  launch: LaunchFacts;
}

export const detectPython: Detector = (ctx) => {
  const experiments: Experiment[] = [];
  const onImportOnly = new Map<string, Experiment[]>();
  const envVars = new EnvUseSet();
  const frameworks = new Set<string>();
  const helperCache = new Map<string, HelperOptions | null>();
  for (const file of ctx.files) {
    if (ctx.outOfTime()) break;
    if (!file.path.endsWith(".py")) continue;
    const source = ctx.readText(file.path);
    if (source === null) continue;
    const test = isTestFile(file.path);
    const pkg = mainPackage(file.path);
    if (notWorthParsing(source, pkg, test)) continue;
    const parsed = ctx.syntax.parse("python", source, (root) => fileFacts(root, source, file.path, pkg, test));
    if (!parsed) continue;
    const facts = parsed.value;
    for (const f of frameworksOf(facts.modules)) frameworks.add(f);
    envVars.addAll(facts.envVars);
    const found = fileExperiments(ctx, file.path, pkg, test, facts, helperCache, envVars);
    experiments.push(...found);
    if (facts.onImport && found.length) onImportOnly.set(file.path, found);
  }
  adoptSharedOptions(ctx, experiments, onImportOnly);
  const docs = readmes(ctx);
  experiments.push(...readmeScripts(ctx, new Set(experiments.map((e) => e.path)), docs));
  withLaunchers(ctx, experiments, docs);
  const procfile = ctx.byPath.has("Procfile") ? ctx.readText("Procfile") : null;
  for (const e of procfile ? procfileExperiments(procfile, (p) => ctx.byPath.has(p)) : []) if (!alreadyFound(experiments, e)) experiments.push(e);
  experiments.sort((a, b) => compare(a.path, b.path) || compare(a.id, b.id));
  return { experiments, envVars: envVars.list(), frameworks: [...frameworks].sort() };
};

/**
 * A Procfile's process that is an experiment found already: the same id, or
 * a line running a script or module the analysis has (`clock: python
 * scripts/scheduler.py --interval 300` is `python:scripts/scheduler.py`, whose
 * options are its parameters).
 */
function alreadyFound(experiments: readonly Experiment[], e: Experiment): boolean {
  const tool = e.command[1] === "-m" && PROCFILE_TOOLS.has(e.command[2] ?? "");
  return experiments.some((x) => x.id === e.id || (!tool && x.path === e.path && x.language === "python"));
}

const PROCFILE_TOOLS = new Set(["gunicorn", "uvicorn", "celery", "rq", "dramatiq"]);

/** What one parsed file offers to run: a web application's server, its own command line (with a helper's options), Django's runserver. */
function fileExperiments(
  ctx: AnalyzerContext,
  path: string,
  pkg: string | null,
  test: boolean,
  facts: FileFacts,
  helperCache: Map<string, HelperOptions | null>,
  envVars: EnvUseSet,
): Experiment[] {
  const out: Experiment[] = [];
  if (facts.web && !facts.entry && !/\s/.test(path) && !inTestFolder(path)) {
    const web = webExperiment(path, facts.web);
    if (web) out.push({ ...web, title: web.command.slice(2).join(" "), description: facts.webDoc });
  }
  if (!facts.entry) return out;
  let entry = pkg !== null && !facts.entry.parameters.length ? withImportedCli(ctx, facts.entry, facts.imported) : facts.entry;
  const helper = facts.helpers.length ? helperOptions(ctx, facts.helpers, helperCache) : null;
  if (facts.onlyIfHelperParses && !helper?.parses) return out;
  if (helper) entry = withHelperOptions(entry, helper);
  if (!test) envVars.addAll(entry.envVars);
  if (/\s/.test(path) || test || inTestFolder(path)) return out; // the command line could not hold it unquoted; a test fixture
  const launch = pkg === null ? launchOf(path, facts.launch, entry, repoView(ctx)) : null;
  const found = entryExperiments(ctx, path, pkg, entry.configurator ? withConfigFile(ctx, path, entry) : entry).map((e) => launched(e, launch));
  // Django's manage.py prints help on its own; its development server is what a person runs.
  if (facts.django && found.length === 1 && !entry.parameters.length) found.push(runserverExperiment(found[0]!));
  return [...out, ...found];
}

/**
 * Most files are not runnable, read no environment variable and import no
 * notable library; a look at the text spares parsing them (what is parsed
 * is still decided by the tree, never by the text).
 */
function notWorthParsing(source: string, pkg: string | null, test: boolean): boolean {
  return (
    pkg === null &&
    !source.includes("__main__") &&
    !MAY_RUN_ON_IMPORT.test(source) &&
    !OPTIONS_FROM_HELPER.test(source) &&
    (test || (!mayReadEnvironment(source) && !FRAMEWORK_MODULES.some((m) => source.includes(m))))
  );
}

function fileFacts(root: Node, source: string, path: string, pkg: string | null, test: boolean): FileFacts {
  const imports = readImports(root);
  const main = pkg !== null || mainBlock(root) !== null;
  const onImport = !main && !test && MAY_RUN_ON_IMPORT.test(source) && runsOnImport(root, imports);
  const runnable = main || onImport;
  const { helpers, onlyIfHelperParses } = helperUse(root, imports, source, path, test, runnable);
  return {
    onImport,
    modules: test ? [] : imports.topLevelModules,
    envVars: !test && mayReadEnvironment(source) ? envVarUses(root, imports, path) : [],
    entry: runnable || onlyIfHelperParses ? entryFacts(root, imports, path) : null,
    imported: pkg !== null ? importedModules(imports.fromImports, pkg) : [],
    helpers,
    onlyIfHelperParses,
    web: !test && !main && /\b(Flask|FastAPI|create_app|make_app)\b/.test(source) ? webApp(root, imports) : null,
    django: main && source.includes("execute_from_command_line") && runsDjangoCommands(root, imports),
    webDoc: !main && /\b(Flask|FastAPI)\b/.test(source) ? docstring(root) : null,
    launch: launchFacts(imports),
  };
}

/** The calls to other modules' functions that may parse a file's options, and whether only they would make it an entry. */
function helperUse(
  root: Node,
  imports: ReturnType<typeof readImports>,
  source: string,
  path: string,
  test: boolean,
  runnable: boolean,
): { helpers: HelperCall[]; onlyIfHelperParses: boolean } {
  // Only a runnable file, or one whose top level assigns its options from a call, can take a helper's options.
  if (test || imports.bindings.size === 0 || (!runnable && !OPTIONS_FROM_HELPER.test(source))) return { helpers: [], onlyIfHelperParses: false };
  const all = helperCalls(root, imports, path);
  const helpers = runnable ? all : all.filter((h) => h.topLevel);
  return { helpers, onlyIfHelperParses: !runnable && helpers.length > 0 && !/^__init__\.py$|\/__init__\.py$/.test(path) };
}

/**
 * A configurator script also takes config files (`python train.py config/x.py`,
 * each executed over its globals): one positional `config` parameter whose
 * choices are the Python files of the folder the README's command lines take
 * them from, else of a `config/` or `configs/` folder beside the script or at the root.
 */
function withConfigFile(ctx: AnalyzerContext, path: string, entry: EntryFacts): EntryFacts {
  if (entry.parameters.some((p) => p.name === "config")) return entry;
  const dir = path.includes("/") ? path.slice(0, path.lastIndexOf("/") + 1) : "";
  const readme = ["README.md", "README.rst", "README.txt", "README", "readme.md"].find((p) => ctx.byPath.has(p));
  const text = (readme && ctx.readText(readme)) || "";
  const script = path.replace(/[.]/g, "\\.");
  const mentioned = [...text.matchAll(new RegExp(`\\bpython[0-9.]*\\s+(?:\\./)?${script}\\s+(?:\\./)?([\\w./-]+/)[\\w.-]+\\.py\\b`, "g"))].map((m) => m[1]!);
  const folders = [...new Set([...mentioned, `${dir}config/`, `${dir}configs/`, "config/", "configs/"])];
  for (const folder of folders) {
    const choices = ctx.files
      .map((f) => f.path)
      .filter((p) => p.startsWith(folder) && p.endsWith(".py") && !p.slice(folder.length).includes("/") && !/\s/.test(p))
      .sort()
      .slice(0, 256);
    if (!choices.length) continue;
    const config = {
      name: "config",
      value: null,
      category: "path" as const,
      cli_option: null,
      choices,
      description: "A config file executed over the script's globals before the --key=value overrides",
      required: false,
    };
    return { ...entry, parameters: [config, ...entry.parameters].slice(0, 256) };
  }
  return entry;
}

/** A script whose options a helper of another module declares: the helper's first, then the script's own additions. */
function withHelperOptions(entry: EntryFacts, helper: HelperOptions): EntryFacts {
  const parameters = uniqueParameters([...helper.facts.parameters, ...entry.parameters]);
  const files = { inputs: new Set(entry.inputs), outputs: new Set(entry.outputs) };
  addParameterPaths(parameters, files, helper.facts.roles);
  const subcommands = entry.subcommands.length
    ? entry.subcommands
    : helper.facts.subcommands.map((sub) => ({ name: sub.name, parameters: uniqueParameters(sub.parameters), description: sub.description }));
  return {
    ...entry,
    parameters,
    subcommands,
    cliDescription: entry.cliDescription ?? helper.facts.description,
    inputs: [...files.inputs].sort(),
    outputs: [...files.outputs].sort(),
  };
}

/** A package's `python3 -m pkg` or a script's `python3 path`, one experiment per sub-command if it has them. */
function entryExperiments(ctx: AnalyzerContext, path: string, pkg: string | null, entry: EntryFacts): Experiment[] {
  if (pkg === null) return withSubcommands(experiment("python-script", `python:${path}`, path, ["python3", path], entry, fallbackTitle(path)), entry);
  const folder = path.slice(0, -"/__main__.py".length);
  const doc = entry.docstring ?? packageDocstring(ctx, `${folder}/__init__.py`);
  return withSubcommands(experiment("python-module", `python-module:${pkg}`, path, ["python3", "-m", pkg], { ...entry, docstring: doc }, pkg), entry);
}

/**
 * A file that only parses options on import, and that another file imports, is the project's shared options
 * module: not an entry itself, but the scripts that import it take its options.
 */
function adoptSharedOptions(ctx: AnalyzerContext, experiments: Experiment[], onImportOnly: Map<string, Experiment[]>): void {
  for (const [path, found] of onImportOnly) {
    if (ctx.outOfTime()) break;
    const importers = importersOf(ctx, path);
    if (!importers.length) continue;
    for (const e of found) experiments.splice(experiments.indexOf(e), 1);
    const options = found[0]?.parameters ?? [];
    for (const imp of importers) {
      if (isTestFile(imp.path) || inTestFolder(imp.path) || onImportOnly.has(imp.path) || /\s/.test(imp.path)) continue;
      const existing = experiments.find((e) => e.path === imp.path);
      if (existing) {
        if (!existing.parameters.length) existing.parameters = options;
      } else if (imp.runsCode) {
        const facts: EntryFacts = {
          docstring: imp.docstring,
          parameters: options,
          cliDescription: null,
          inputs: [],
          outputs: [],
          envVars: [],
          subcommands: [],
        };
        experiments.push(experiment("python-script", `python:${imp.path}`, imp.path, ["python3", imp.path], facts, fallbackTitle(imp.path)));
      }
    }
  }
}

/** Text of a script whose options a helper parses at its top level (`args = get_args()`). */
const OPTIONS_FROM_HELPER = /^(args|opts?|options|config|cfg|hparams|hps|flags|params|arguments)\s*=\s*[\w.]+\(/m;

/** Text that a file run by importing it must contain (what is run is still decided on the tree). */
const MAY_RUN_ON_IMPORT = /parse_args|parse_known_args|parse_intermixed_args|Fire\(|typer|click|exec\(open/;

/**
 * A group's or sub-parser's commands, one experiment each (`python3 cli.py
 * train`, id `python:cli.py train`), in place of the bare command, which only
 * prints usage. Options of the top-level parser go before the sub-command's
 * word, so they are not among a sub-command's parameters.
 */
function withSubcommands(base: Experiment, entry: EntryFacts): Experiment[] {
  if (!entry.subcommands.length) return [base];
  return entry.subcommands.map((sub) => {
    const command = [...base.command, sub.name];
    return {
      ...base,
      id: `${base.id} ${sub.name}`,
      // The words a user types after python3: "tool.py fit", "forecast train".
      title: command.slice(1).join(" ").replace(/^-m /, "").slice(0, 512),
      description: sub.description ?? base.description,
      entry_point: command.join(" "),
      command,
      parameters: sub.parameters,
    };
  });
}

/** The other Python files that import the module at path (`import opts`, `from configs.opts import x`, `from configs import opts`). */
function importersOf(ctx: AnalyzerContext, path: string): { path: string; runsCode: boolean; docstring: string | null }[] {
  const stem = path.slice(path.lastIndexOf("/") + 1, -".py".length);
  if (!IDENTIFIER.test(stem)) return [];
  const mentions = new RegExp(`\\b${stem}\\b`);
  const out: { path: string; runsCode: boolean; docstring: string | null }[] = [];
  for (const file of ctx.files) {
    if (!file.path.endsWith(".py") || file.path === path) continue;
    const text = ctx.readText(file.path);
    if (text === null || !mentions.test(text)) continue;
    const found = ctx.syntax.parse("python", text, (root) => {
      const imports = readImports(root);
      const imported =
        imports.topLevelModules.some((m) => m.split(".").pop() === stem) ||
        imports.fromImports.some((f) => f.module.split(".").pop() === stem || f.names.some((n) => n.imported === stem));
      return imported ? { path: file.path, runsCode: runsCodeOnImport(root), docstring: docstring(root) } : null;
    })?.value;
    if (found) out.push(found);
  }
  return out;
}

/** The READMEs that may say how to run things: the root's, then those of folders (three deep at most), with their folder. */
function readmes(ctx: AnalyzerContext): { dir: string; text: string }[] {
  const out: { dir: string; text: string }[] = [];
  const names = /^(readme\.md|readme\.rst|readme\.txt|readme)$/i;
  const found = ctx.files.filter((f) => names.test(f.path.slice(f.path.lastIndexOf("/") + 1)) && f.path.split("/").length <= 4 && !inTestFolder(f.path));
  found.sort((a, b) => a.path.split("/").length - b.path.split("/").length || compare(a.path, b.path));
  for (const f of found.slice(0, 64)) {
    const text = ctx.readText(f.path);
    // Lines continued with a backslash are one command.
    if (text)
      out.push({ dir: f.path.includes("/") ? f.path.slice(0, f.path.lastIndexOf("/") + 1) : "", text: text.slice(0, 200_000).replace(/\\\r?\n[ \t]*/g, " ") });
  }
  return out;
}

/** A path a README names, from its folder (`python make_dataset.py` in series/README.md) or from the root. */
function resolveFromReadme(ctx: AnalyzerContext, dir: string, raw: string): string | null {
  const path = raw.replace(/^\.\//, "");
  if (dir && ctx.byPath.has(`${dir}${path}`)) return `${dir}${path}`;
  return ctx.byPath.has(path) ? path : null;
}

/**
 * Scripts a README tells users to run (`python data/prepare.py`, or
 * `python make_dataset.py` in series/README.md) that do their work at the
 * top level, with no main block and no options: a data preparation or
 * download script. Only a README's word makes them entries; many library
 * modules also do something on import.
 */
function readmeScripts(ctx: AnalyzerContext, found: ReadonlySet<string>, docs: readonly { dir: string; text: string }[]): Experiment[] {
  const out: Experiment[] = [];
  for (const { dir, text } of docs) {
    for (const m of text.matchAll(/\bpython[0-9.]*\s+(?:-u\s+)?([\w./-]+\.py)\b/g)) {
      const path = resolveFromReadme(ctx, dir, m[1]!);
      if (!path || found.has(path) || out.some((e) => e.path === path) || isTestFile(path) || inTestFolder(path) || /\s/.test(path)) continue;
      const source = ctx.readText(path);
      if (source === null) continue;
      const facts = ctx.syntax.parse("python", source, (root) => {
        if (!runsCodeOnImport(root)) return null;
        const imports = readImports(root);
        return { docstring: docstring(root), files: fileAccesses(descendants(root, "call"), imports, pathValues(root, [])), launch: launchFacts(imports) };
      })?.value;
      if (!facts) continue;
      const entry: EntryFacts = {
        docstring: facts.docstring,
        parameters: [],
        cliDescription: null,
        inputs: [...facts.files.inputs].sort(),
        outputs: [...facts.files.outputs].sort(),
        envVars: [],
        subcommands: [],
      };
      const launch = launchOf(path, facts.launch, entry, repoView(ctx));
      out.push(launched(experiment("python-script", `python:${path}`, path, ["python3", path], entry, fallbackTitle(path)), launch));
    }
  }
  return out;
}

function launchFacts(imports: ReturnType<typeof readImports>): LaunchFacts {
  return {
    relativeImport: imports.fromImports.some((f) => f.level > 0),
    importedRoots: [...new Set(imports.topLevelModules.map((m) => m.split(".")[0]!))],
  };
}

const repoViews = new WeakMap<AnalyzerContext, RepoView>();

/** The repository's files and folders, and whether pip installs the project itself, read once per analysis. */
function repoView(ctx: AnalyzerContext): RepoView {
  let view = repoViews.get(ctx);
  if (!view) {
    const folders = new Set<string>();
    for (const { path } of ctx.files) for (let i = path.indexOf("/"); i > 0; i = path.indexOf("/", i + 1)) folders.add(path.slice(0, i));
    const pyproject = ctx.byPath.has("pyproject.toml") ? (ctx.readText("pyproject.toml") ?? "") : "";
    view = {
      hasFile: (p) => ctx.byPath.has(p),
      hasFolder: (p) => folders.has(p),
      readmeFolderRuns: readmeFolderRuns(readmes(ctx), (p) => ctx.byPath.has(p)),
      installsProject: ctx.byPath.has("setup.py") || ctx.byPath.has("setup.cfg") || /^\[build-system\]/m.test(pyproject),
    };
    repoViews.set(ctx, view);
  }
  return view;
}

/** Launchers that run a Python script on several processes or devices. */
const LAUNCHER = /(?:^|[\s`;&|(])(torchrun|python[0-9.]*\s+-m\s+torch\.distributed\.(?:run|launch)|accelerate\s+launch|deepspeed)\s+([^\n`]{0,1000})/g;

/**
 * A script a README launches with torchrun, `accelerate launch` or deepspeed
 * runs that way: its command becomes the launcher's, with the launcher's
 * options as written (`torchrun --nproc_per_node=4 train.py`). The first such line wins.
 */
function withLaunchers(ctx: AnalyzerContext, experiments: Experiment[], docs: readonly { dir: string; text: string }[]): void {
  const done = new Set<string>();
  for (const { dir, text } of docs) {
    for (const m of text.matchAll(LAUNCHER)) {
      const words = m[2]!.trim().split(/\s+/);
      const at = words.findIndex((w) => /\.py$/.test(w));
      if (at < 0 || words.slice(0, at).some((w) => /[;&|<>$`'"()]/.test(w))) continue;
      const path = resolveFromReadme(ctx, dir, words[at]!);
      if (!path || done.has(path)) continue;
      done.add(path);
      const launcher = [...m[1]!.split(/\s+/).map((w) => (/^python[0-9.]*$/.test(w) ? "python3" : w)), ...words.slice(0, at)];
      for (const e of experiments) {
        if (e.path !== path || e.command[0] !== "python3" || e.command[1] !== path) continue;
        e.command = [...launcher, ...e.command.slice(1)].slice(0, 64);
        e.entry_point = e.command.join(" ");
      }
    }
  }
}

/** Whether the module does work at its top level (calls, loops, branches), as a script does, rather than only define things. */
function runsCodeOnImport(root: Node): boolean {
  return children(root).some((stmt) => {
    if (["for_statement", "while_statement", "with_statement", "try_statement", "if_statement"].includes(stmt.type)) return true;
    return stmt.type === "expression_statement" && descendants(stmt, "call").length > 0;
  });
}

/** A title for a script without a docstring: its file name, with its folder when the name alone says little (main.py, run.py). */
export function fallbackTitle(path: string): string {
  const parts = path.split("/");
  const name = parts.pop()!;
  const folder = parts.pop();
  return folder && /^(main|run|__main__|app|cli|script|index|start|train|test|demo|example)\.py$/.test(name) ? `${folder}/${name}` : name;
}

const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

function experiment(kind: ExperimentKind, id: string, path: string, command: string[], facts: EntryFacts, fallbackTitle: string): Experiment {
  const doc = facts.docstring ?? "";
  const lines = doc.split("\n");
  const first = lines.findIndex((l) => l.trim() !== "");
  // Without a docstring, the parser's own description says what it does better than a file name.
  const cliTitle = facts.cliDescription
    ? (/^(.{1,120}?[.!?])(\s|$)/.exec(facts.cliDescription.trim())?.[1] ?? (facts.cliDescription.length <= 120 ? facts.cliDescription.trim() : null))
    : null;
  const title = first >= 0 ? lines[first]!.trim() : (cliTitle ?? fallbackTitle);
  // A reStructuredText title is underlined ("ast\n~~~"); the underline is not text.
  const underlined = first >= 0 && /^([=\-~^*#+`"'])\1+$/.test(lines[first + 1]?.trim() ?? "");
  const rest =
    first >= 0
      ? lines
          .slice(first + (underlined ? 2 : 1))
          .join("\n")
          .trim()
      : "";
  const description = facts.cliDescription ?? (rest || null);
  return {
    id,
    title: title.slice(0, 512),
    description: description === null ? null : description.slice(0, 4096),
    entry_point: command.join(" "),
    command,
    language: "python",
    kind,
    path,
    inputs: facts.inputs.slice(0, 256),
    outputs: facts.outputs.slice(0, 256),
    parameters: facts.parameters,
  };
}

/**
 * The files a package's `from .cli import main` (or `from pkg.cli import
 * main`, `from . import cli`) may point at, most specific first.
 */
function importedModules(fromImports: readonly FromImport[], pkg: string): FileFacts["imported"] {
  const out: FileFacts["imported"] = [];
  const pkgParts = pkg.split(".");
  for (const from of fromImports) {
    const bases: string[][] = [];
    if (from.level > 0) {
      if (from.level - 1 >= pkgParts.length) continue;
      bases.push([...pkgParts.slice(0, pkgParts.length - (from.level - 1)), ...(from.module ? from.module.split(".") : [])]);
    } else {
      const module = from.module.split(".");
      bases.push(module);
      // A src/ layout: `from tool.cli import main` inside src/tool/__main__.py.
      const at = pkgParts.indexOf(module[0]!);
      if (at > 0) bases.push([...pkgParts.slice(0, at), ...module]);
    }
    const names = new Set(from.names.map((n) => n.local));
    const candidates: string[] = [];
    for (const base of bases) {
      if (!from.module) {
        for (const n of from.names) candidates.push(`${[...base, n.imported].join("/")}.py`, `${[...base, n.imported].join("/")}/__init__.py`);
      }
      candidates.push(`${base.join("/")}.py`, `${base.join("/")}/__init__.py`);
    }
    out.push({ candidates, names });
  }
  return out;
}

/** A __main__.py that hands over to a function of its package: that module's parameters and files. */
function withImportedCli(ctx: AnalyzerContext, entry: EntryFacts, imported: FileFacts["imported"]): EntryFacts {
  for (const { candidates, names } of imported) {
    for (const path of candidates) {
      if (!ctx.byPath.has(path)) continue;
      const source = ctx.readText(path);
      if (source === null) continue;
      const facts = ctx.syntax.parse("python", source, (root) => entryFacts(root, readImports(root), path, names))?.value;
      if (!facts?.parameters.length && !facts?.subcommands.length) continue;
      return {
        docstring: entry.docstring,
        parameters: facts.parameters,
        subcommands: facts.subcommands,
        cliDescription: entry.cliDescription ?? facts.cliDescription,
        inputs: [...new Set([...entry.inputs, ...facts.inputs])].sort(),
        outputs: [...new Set([...entry.outputs, ...facts.outputs])].sort(),
        envVars: [...entry.envVars, ...facts.envVars],
      };
    }
  }
  return entry;
}

function packageDocstring(ctx: AnalyzerContext, path: string): string | null {
  if (!ctx.byPath.has(path)) return null;
  const source = ctx.readText(path);
  if (source === null) return null;
  return ctx.syntax.parse("python", source, (root) => docstring(root))?.value ?? null;
}
