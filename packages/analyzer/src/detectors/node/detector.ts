import { posix } from "node:path";
import type { AnalyzerContext, Detector } from "../../detector.ts";
import { EnvUseSet } from "../../env-rules.ts";
import type { EnvVarUse, Experiment } from "../../model.ts";
import { entryFacts, grammarFor, isTypeScript, type EntryFacts } from "./entry.ts";
import { envUses } from "./env.ts";
import { clip } from "./literals.ts";
import { isLifecycleScript, scriptEntryFile } from "./scripts.ts";
import { frameworkPort } from "./web.ts";
import { readProcfile, withoutPlatformOptions } from "../../procfile.ts";

// Node.js projects: every package.json's scripts (npm run <name>) and bins
// (node <file>), with the options their entry files parse, plus the
// environment variables all JavaScript/TypeScript sources read.

const FRAMEWORKS: readonly [string, string][] = [
  ["express", "Express"],
  ["koa", "Koa"],
  ["fastify", "Fastify"],
  ["next", "Next.js"],
  ["react", "React"],
  ["vue", "Vue"],
  ["svelte", "Svelte"],
  ["@nestjs/core", "NestJS"],
  ["typescript", "TypeScript"],
  ["vite", "Vite"],
  ["jest", "Jest"],
  ["vitest", "Vitest"],
  ["@tensorflow/tfjs", "TensorFlow.js"],
  ["openai", "OpenAI SDK"],
  ["commander", "Commander"],
  ["yargs", "yargs"],
];

type PackageJson = Record<string, unknown>;

export const detectNode: Detector = (ctx) => {
  const experiments: Experiment[] = [];
  const deps = new Set<string>();
  const facts = new Map<string, EntryFacts>();
  const factsOf = (path: string) => {
    let f = facts.get(path);
    if (!f) facts.set(path, (f = entryFacts(ctx, path)));
    return f;
  };
  for (const file of ctx.files) {
    if (ctx.outOfTime()) break;
    if (file.path !== "package.json" && !file.path.endsWith("/package.json")) continue;
    const pkg = readPackageJson(ctx, file.path);
    if (!pkg) continue;
    for (const field of ["dependencies", "devDependencies"]) {
      const d = pkg[field];
      if (isRecord(d)) for (const name of Object.keys(d)) deps.add(name);
    }
    experiments.push(...packageExperiments(ctx, file.path, pkg, factsOf));
  }
  experiments.push(...procfileNodeExperiments(ctx, factsOf));
  return {
    experiments,
    // Extensionless entries (express-generator's bin/www) are JavaScript too, though only a script or bin says so.
    envVars: envVars(
      ctx,
      [...facts.keys()].filter((p) => grammarFor(p) === null && !/\.[^/]*$/.test(p)),
    ),
    frameworks: FRAMEWORKS.filter(([dep]) => deps.has(dep)).map(([, name]) => name),
  };
};

function readPackageJson(ctx: AnalyzerContext, path: string): PackageJson | null {
  const text = ctx.readText(path);
  if (text === null) return null;
  try {
    const value: unknown = JSON.parse(text);
    return isRecord(value) ? value : null;
  } catch {
    return null;
  }
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const hasSpace = (s: string) => /\s/.test(s);

function packageExperiments(ctx: AnalyzerContext, pkgPath: string, pkg: PackageJson, factsOf: (path: string) => EntryFacts): Experiment[] {
  const dir = posix.dirname(pkgPath) === "." ? "" : posix.dirname(pkgPath);
  if (hasSpace(dir)) return [];
  const out = [...scriptExperiments(ctx, pkgPath, pkg, dir, factsOf), ...binExperiments(pkg, dir, factsOf)];
  return out.filter((e) => e.id.length <= 512 && e.entry_point.length <= 4096);
}

/** One `npm run <name> --` per script, in name order, without the lifecycle scripts npm runs itself. */
function scriptExperiments(ctx: AnalyzerContext, pkgPath: string, pkg: PackageJson, dir: string, factsOf: (path: string) => EntryFacts): Experiment[] {
  const out: Experiment[] = [];
  const scripts = isRecord(pkg.scripts) ? pkg.scripts : {};
  const names = new Set(Object.keys(scripts));
  for (const name of [...names].sort()) {
    const body = scripts[name];
    if (typeof body !== "string" || name === "" || hasSpace(name) || isLifecycleScript(name, names)) continue;
    const entry = scriptEntryFile(body, dir, (p) => ctx.byPath.has(p));
    const facts = entry ? factsOf(entry) : null;
    const framework = facts ? null : frameworkPort(body);
    const command = dir === "" ? ["npm", "run", name, "--"] : ["npm", "--prefix", dir, "run", name, "--"];
    out.push({
      id: dir === "" ? `npm:${name}` : `npm:${dir}:${name}`,
      title: name,
      description: body.trim() ? clip(body, 4096) : null,
      entry_point: command.join(" "),
      command,
      language: entry && isTypeScript(entry) ? "typescript" : "javascript",
      kind: "npm-script",
      path: pkgPath,
      inputs: facts?.inputs ?? [],
      outputs: facts?.outputs ?? [],
      parameters: facts?.parameters ?? (framework ? [framework] : []),
    });
  }
  return out;
}

/**
 * A root Procfile's processes that run a file with Node (`web: node
 * server.js`, `worker: node --max-old-space-size=512 jobs/worker.js`), as
 * `procfile:<process>` with the file's parameters; lines that run an npm
 * script, or that a root package.json script already runs word for word, are
 * that script's experiment.
 */
function procfileNodeExperiments(ctx: AnalyzerContext, factsOf: (path: string) => EntryFacts): Experiment[] {
  const text = ctx.byPath.has("Procfile") ? ctx.readText("Procfile") : null;
  if (!text) return [];
  const pkg = ctx.byPath.has("package.json") ? readPackageJson(ctx, "package.json") : null;
  const scripts = pkg && isRecord(pkg.scripts) ? Object.values(pkg.scripts).filter((v): v is string => typeof v === "string") : [];
  const out: Experiment[] = [];
  for (const line of readProcfile(text)) {
    const words = withoutPlatformOptions(line.words);
    const entry = words ? scriptEntryFile(words.join(" "), "", (p) => ctx.byPath.has(p)) : null;
    if (!words || !entry || scripts.some((s) => s.trim().split(/\s+/).join(" ") === words.join(" "))) continue;
    const facts = factsOf(entry);
    out.push({
      id: `procfile:${line.process}`,
      title: `${line.process}: ${words.join(" ")}`.slice(0, 512),
      description: `The Procfile's ${line.process} process`,
      entry_point: words.join(" "),
      command: words.slice(0, 64),
      language: isTypeScript(entry) ? "typescript" : "javascript",
      kind: "node-bin",
      path: entry,
      inputs: facts.inputs,
      outputs: facts.outputs,
      parameters: facts.subcommands.length ? [] : facts.parameters,
    });
  }
  return out;
}

/** A bin's path inside the repository, or null when it leaves it or a command line could not hold it unquoted. */
function binPath(name: string, dir: string, target: string): string | null {
  const path = posix.normalize(dir === "" ? target : `${dir}/${target}`);
  if (!name || hasSpace(name) || hasSpace(path) || path.startsWith("../") || path === ".." || path.startsWith("/")) return null;
  return path;
}

/** `node <bin>` per bin, or one per sub-command of a program of sub-commands. */
function binExperiments(pkg: PackageJson, dir: string, factsOf: (path: string) => EntryFacts): Experiment[] {
  const out: Experiment[] = [];
  const description = typeof pkg.description === "string" && pkg.description.trim() ? clip(pkg.description.trim(), 4096) : null;
  for (const [name, target] of bins(pkg)) {
    const path = binPath(name, dir, target);
    if (path === null) continue;
    const facts = factsOf(path);
    const base: Experiment = {
      id: `node-bin:${name}`,
      title: name,
      description,
      entry_point: `node ${path}`,
      command: ["node", path],
      language: isTypeScript(path) ? "typescript" : "javascript",
      kind: "node-bin",
      path,
      inputs: facts.inputs,
      outputs: facts.outputs,
      parameters: facts.parameters,
    };
    if (!facts.subcommands.length || facts.runsAlone) out.push(base);
    // A program of sub-commands: one experiment each (`node cli.js train`, id `node-bin:tool train`).
    for (const sub of facts.subcommands) {
      const command = [...base.command, sub.name];
      out.push({
        ...base,
        id: `${base.id} ${sub.name}`,
        title: `${name} ${sub.name}`,
        description: sub.description ?? description,
        entry_point: command.join(" "),
        command,
        parameters: sub.parameters,
      });
    }
  }
  return out;
}

/** `"bin": "cli.js"` (named after the package, without its scope) or `"bin": { "name": "cli.js" }`, by name. */
function bins(pkg: PackageJson): [string, string][] {
  if (typeof pkg.bin === "string") {
    const name = typeof pkg.name === "string" ? pkg.name.replace(/^@[^/]*\//, "") : "";
    return name ? [[name, pkg.bin]] : [];
  }
  if (!isRecord(pkg.bin)) return [];
  return Object.entries(pkg.bin)
    .filter((e): e is [string, string] => typeof e[1] === "string" && e[1] !== "")
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

const ENV_OBJECTS = ["process.env", "process?.env", "import.meta.env", "import.meta?.env"];
const TEST_FILE = /\.(test|spec)\.[^/]+$/;
const TEST_DIR = /(^|\/)(test|tests|__tests__)\//;

function envVars(ctx: AnalyzerContext, extensionless: readonly string[]): EnvVarUse[] {
  const found = new EnvUseSet();
  for (const file of [...ctx.files, ...extensionless.map((path) => ({ path }))]) {
    if (ctx.outOfTime()) break;
    const grammar = grammarFor(file.path) ?? (extensionless.includes(file.path) ? "javascript" : null);
    if (!grammar || TEST_FILE.test(file.path) || TEST_DIR.test(file.path) || /\.d\.[mc]?ts$|\.min\.js$/.test(file.path)) continue;
    const text = ctx.readText(file.path);
    // Every read this detector knows spells out one of these, so other files are not worth a parse.
    if (text === null || !ENV_OBJECTS.some((o) => text.includes(o))) continue;
    const uses = safely(() => ctx.syntax.parse(grammar, text, (root) => envUses(root, file.path, text))?.value) ?? [];
    found.addAll(uses);
  }
  return found.list();
}

/** Whatever a hostile file does to the reading of it, the analysis carries on without it. */
function safely<T>(fn: () => T): T | undefined {
  try {
    return fn();
  } catch {
    return undefined;
  }
}
