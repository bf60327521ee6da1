import { posix } from "node:path";
import type { AnalyzerContext } from "./detector.ts";
import { isEnvTemplate, providedByLauncher } from "./env-rules.ts";
import type { EnvVarUse, Experiment } from "./model.ts";
import { parseMakefile, type MakeRule } from "./detectors/make/parse.ts";

// Which files an experiment's entry point reaches, so that the variables it
// cannot start without are its own and not the whole repository's: a Python
// file's imports (and the settings module Django is pointed at), a
// JavaScript/TypeScript file's relative imports (and, for `@prisma/client`,
// the Prisma schema whose env() it needs), the files a command line names
// (npm scripts, make recipes and their prerequisites, shell scripts: `python
// x.py`, `tsx src/main.ts`, `python -m pkg`, `uvicorn app.main:app`, `npm run
// other`, `make other`, `docker compose`), a Go program's folder and the
// module's packages it imports. Read from the text with patterns (the
// detectors have parsed what needed parsing); a reference that cannot be told
// (a dynamic import, a computed path) is not followed.

const JS_EXTENSIONS = [".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts"];
const COMPOSE_FILES = ["compose.yaml", "compose.yml", "docker-compose.yml", "docker-compose.yaml"];
const MAKEFILE_NAMES = ["GNUmakefile", "makefile", "Makefile"];
/**
 * Server frameworks whose command names no file: the server loads the
 * package's own modules (routes, API handlers), so the script reaches them all.
 * Client bundlers (vite, react-scripts) are not here: an unset variable in a
 * browser bundle is undefined, never a start-up failure.
 */
const SERVER_FRAMEWORKS = new Set(["next", "nuxt", "nuxi", "remix", "nest"]);

/**
 * Sets each experiment's `required_env_vars` from the required uses in the
 * files it reaches (never a template's, never a launcher's), and returns
 * their union: the variables some experiment cannot start without.
 */
export function attributeRequiredEnv(ctx: AnalyzerContext, experiments: Experiment[], uses: readonly EnvVarUse[]): Set<string> {
  const byFile = new Map<string, Set<string>>();
  for (const u of uses) {
    if (!u.required || isEnvTemplate(u.path) || providedByLauncher(u.name)) continue;
    const names = byFile.get(u.path);
    if (names) names.add(u.name);
    else byFile.set(u.path, new Set([u.name]));
  }
  const union = new Set<string>();
  if (!byFile.size) {
    for (const e of experiments) e.required_env_vars = [];
    return union;
  }
  const graph = new Graph(ctx);
  const names = new RequiredNames(graph, byFile);
  for (const e of experiments) {
    const found = new Set<string>();
    if (!ctx.outOfTime()) for (const node of startNodes(ctx, e)) for (const n of names.of(node)) found.add(n);
    e.required_env_vars = [...found].sort().slice(0, 256);
    for (const n of e.required_env_vars) union.add(n);
  }
  return union;
}

const NONE: ReadonlySet<string> = new Set();

/**
 * The required names of everything a node reaches, for every node at most
 * once: Tarjan's strongly connected components (iterative, so a long import
 * chain cannot overflow the stack), each component's names the union of its
 * files' and of the components it reaches. Linear in the graph, however many
 * experiments share it.
 */
class RequiredNames {
  readonly #graph: Graph;
  readonly #byFile: ReadonlyMap<string, ReadonlySet<string>>;
  readonly #done = new Map<string, ReadonlySet<string>>();

  constructor(graph: Graph, byFile: ReadonlyMap<string, ReadonlySet<string>>) {
    this.#graph = graph;
    this.#byFile = byFile;
  }

  of(start: string): ReadonlySet<string> {
    const known = this.#done.get(start);
    if (known) return known;
    const index = new Map<string, number>();
    const low = new Map<string, number>();
    const stack: string[] = [];
    const onStack = new Set<string>();
    const frames: { node: string; edges: string[]; next: number }[] = [];
    const open = (node: string) => {
      index.set(node, index.size);
      low.set(node, index.size - 1);
      stack.push(node);
      onStack.add(node);
      frames.push({ node, edges: this.#graph.edgesOf(node), next: 0 });
    };
    open(start);
    while (frames.length) {
      const frame = frames[frames.length - 1]!;
      if (frame.next < frame.edges.length) {
        const next = frame.edges[frame.next++]!;
        if (this.#done.has(next)) continue;
        if (!index.has(next)) open(next);
        else if (onStack.has(next)) low.set(frame.node, Math.min(low.get(frame.node)!, index.get(next)!));
        continue;
      }
      frames.pop();
      const parent = frames[frames.length - 1];
      if (parent) low.set(parent.node, Math.min(low.get(parent.node)!, low.get(frame.node)!));
      if (low.get(frame.node) !== index.get(frame.node)) continue;
      // frame.node roots a component: pop it, and give every member the component's names.
      const members: string[] = [];
      let m: string;
      do {
        m = stack.pop()!;
        onStack.delete(m);
        members.push(m);
      } while (m !== frame.node);
      this.#finish(members);
    }
    return this.#done.get(start) ?? NONE;
  }

  #finish(members: readonly string[]): void {
    const inside = new Set(members);
    let names: Set<string> | null = null;
    const addAll = (more: ReadonlySet<string> | undefined) => {
      if (!more?.size) return;
      names ??= new Set();
      for (const n of more) names.add(n);
    };
    for (const member of members) {
      addAll(this.#byFile.get(member));
      for (const next of this.#graph.edgesOf(member)) if (!inside.has(next)) addAll(this.#done.get(next));
    }
    const result: ReadonlySet<string> = names ?? NONE;
    for (const member of members) this.#done.set(member, result);
  }
}

/** The nodes an experiment starts from: a file, a folder's Go files, an npm script or a make target. */
function startNodes(ctx: AnalyzerContext, e: Experiment): string[] {
  switch (e.kind) {
    case "npm-script": {
      const name = e.command[e.command.indexOf("run") + 1];
      return name ? [npmNode(e.path, name)] : [];
    }
    case "make-target": {
      const c = e.command.indexOf("-C");
      const dir = c >= 0 ? (e.command[c + 1] ?? "") : "";
      const makefile = MAKEFILE_NAMES.map((n) => (dir ? `${dir}/${n}` : n)).find((p) => ctx.byPath.has(p)) ?? e.path;
      return [makeNode(makefile, e.command.at(-1)!)];
    }
    case "go-main":
      return goFolder(ctx, e.path === "." ? "" : e.path);
    case "python-module":
      return [e.path, ...packageInits(ctx, e.path)];
    default:
      return [e.path];
  }
}

const npmNode = (pkgJson: string, script: string) => `npm\0${pkgJson}\0${script}`;
const makeNode = (makefile: string, target: string) => `make\0${makefile}\0${target}`;

/** The `__init__.py` of every package above a module file (`a/b/c.py` → a/__init__.py, a/b/__init__.py). */
function packageInits(ctx: AnalyzerContext, path: string): string[] {
  const parts = path.split("/").slice(0, -1);
  const out: string[] = [];
  for (let i = 1; i <= parts.length; i++) {
    const init = `${parts.slice(0, i).join("/")}/__init__.py`;
    if (ctx.byPath.has(init)) out.push(init);
  }
  return out;
}

const goFolders = new WeakMap<AnalyzerContext, Map<string, string[]>>();

/** A folder's Go files (not its tests), from an index of the listing built once. */
function goFolder(ctx: AnalyzerContext, dir: string): string[] {
  let index = goFolders.get(ctx);
  if (!index) {
    index = new Map();
    for (const { path } of ctx.files) {
      if (!path.endsWith(".go") || path.endsWith("_test.go")) continue;
      const d = posix.dirname(path) === "." ? "" : posix.dirname(path);
      const list = index.get(d);
      if (list) list.push(path);
      else index.set(d, [path]);
    }
    goFolders.set(ctx, index);
  }
  return index.get(dir) ?? [];
}

class Graph {
  readonly #ctx: AnalyzerContext;
  readonly #edges = new Map<string, string[]>();
  readonly #packages = new Map<string, Record<string, unknown> | null>();
  readonly #makefiles = new Map<string, Map<string, MakeRule[]>>();
  #goModules: { dir: string; module: string }[] | null = null;
  #prisma: string[] | null = null;
  readonly #sources = new Map<string, string[]>();

  constructor(ctx: AnalyzerContext) {
    this.#ctx = ctx;
  }

  /** The nodes a node leads to (computed once). */
  edgesOf(node: string): string[] {
    let edges = this.#edges.get(node);
    if (!edges) {
      edges = [...new Set(this.#computeEdges(node))].filter((n) => n !== node);
      this.#edges.set(node, edges);
    }
    return edges;
  }

  #computeEdges(node: string): string[] {
    if (node.startsWith("npm\0")) {
      const [, pkgJson, script] = node.split("\0") as [string, string, string];
      return this.#npmEdges(pkgJson, script);
    }
    if (node.startsWith("make\0")) {
      const [, makefile, target] = node.split("\0") as [string, string, string];
      return this.#makeEdges(makefile, target);
    }
    const ext = posix.extname(node);
    if (ext === ".py") return this.#pythonEdges(node, this.#ctx.readText(node));
    if (ext === ".ipynb") return this.#pythonEdges(node, notebookCode(this.#ctx.readText(node)));
    if (JS_EXTENSIONS.includes(ext)) return this.#jsEdges(node);
    if (ext === ".go") return this.#goEdges(node);
    if (ext === ".sh" || ext === ".bash" || ext === "" || node.endsWith("Procfile")) {
      const text = this.#ctx.readText(node);
      // An extensionless Node program (express-generator's bin/www) requires modules as any JavaScript file does.
      if (ext === "" && text !== null && /^#!.*\bnode\b/.test(text)) return this.#jsEdges(node);
      return text === null || text.length > 256 * 1024 ? [] : this.#commandEdges(text, posix.dirname(node) === "." ? "" : posix.dirname(node), "");
    }
    return [];
  }

  #exists = (p: string): boolean => this.#ctx.byPath.has(p);

  #pythonEdges(path: string, text: string | null): string[] {
    if (text === null) return [];
    const dir = posix.dirname(path) === "." ? "" : posix.dirname(path);
    const out: string[] = [];
    const modules: { module: string; level: number; names: string[] }[] = [];
    for (const m of text.matchAll(/^[ \t]*from[ \t]+(\.*)([\w.]*)[ \t]+import[ \t]+\(?([\w \t,\\\n]+?)\)?[ \t]*(?:#.*)?$/gm)) {
      const names = m[3]!.split(/[\s,\\]+/).filter((n) => /^\w+$/.test(n) && n !== "as");
      modules.push({ level: m[1]!.length, module: m[2]!, names });
    }
    for (const m of text.matchAll(/^[ \t]*import[ \t]+([\w.]+(?:[ \t]+as[ \t]+\w+)?(?:[ \t]*,[ \t]*[\w.]+(?:[ \t]+as[ \t]+\w+)?)*)/gm)) {
      for (const part of m[1]!.split(",")) modules.push({ level: 0, module: part.trim().split(/\s+/)[0]!, names: [] });
    }
    // A settings module handed over by name: Django's DJANGO_SETTINGS_MODULE, importlib.import_module("pkg.mod").
    for (const m of text.matchAll(/(?:DJANGO_SETTINGS_MODULE["'][ \t]*,|import_module\()[ \t]*["']([\w.]+)["']/g))
      modules.push({ level: 0, module: m[1]!, names: [] });
    for (const { module, level, names } of modules) {
      const bases: string[] = [];
      if (level > 0) {
        const parts = dir ? dir.split("/") : [];
        if (level - 1 > parts.length) continue;
        bases.push(parts.slice(0, parts.length - (level - 1)).join("/"));
      } else bases.push("", dir, "src");
      for (const base of new Set(bases)) {
        const parts = [...(base ? base.split("/") : []), ...(module ? module.split(".") : [])];
        const start = base ? base.split("/").length : 0;
        for (let i = start + 1; i <= parts.length; i++) {
          const p = parts.slice(0, i).join("/");
          if (i < parts.length) {
            if (this.#exists(`${p}/__init__.py`)) out.push(`${p}/__init__.py`);
          } else out.push(...[`${p}.py`, `${p}/__init__.py`].filter(this.#exists));
        }
        const prefix = parts.join("/");
        for (const n of names) out.push(...[`${prefix ? `${prefix}/` : ""}${n}.py`, `${prefix ? `${prefix}/` : ""}${n}/__init__.py`].filter(this.#exists));
      }
    }
    return out;
  }

  #jsEdges(path: string): string[] {
    const text = this.#ctx.readText(path);
    if (text === null) return [];
    const dir = posix.dirname(path) === "." ? "" : posix.dirname(path);
    const out: string[] = [];
    for (const m of text.matchAll(/\bfrom\s*["']([^"'\n]+)["']|\bimport\s*["']([^"'\n]+)["']|\b(?:require|import)\s*\(\s*["']([^"'\n]+)["']\s*\)/g)) {
      const spec = m[1] ?? m[2] ?? m[3]!;
      if (spec === "@prisma/client" || spec.startsWith("@prisma/client/")) out.push(...this.#prismaSchemas());
      else if (spec.startsWith("./") || spec.startsWith("../")) {
        const file = this.#resolveJs(posix.join(dir || ".", spec));
        if (file) out.push(file);
      } else if (spec.startsWith("@/") || spec.startsWith("~/")) {
        const file = this.#resolveJs(`src/${spec.slice(2)}`) ?? this.#resolveJs(spec.slice(2));
        if (file) out.push(file);
      }
    }
    return out;
  }

  /** A module path as Node or a TypeScript bundler resolves it: as written, with an extension, `.js` written for `.ts`, or a folder's index. */
  #resolveJs(joined: string): string | null {
    const p = posix.normalize(joined).replace(/\/+$/, "");
    if (p.startsWith("../") || p === "..") return null;
    const stem = p.replace(/\.(m|c)?jsx?$/, "");
    const candidates = [p, ...JS_EXTENSIONS.map((e) => stem + e), ...JS_EXTENSIONS.map((e) => `${p}/index${e}`)];
    return candidates.find(this.#exists) ?? null;
  }

  /** A package's own JavaScript/TypeScript files (not its tests): what a framework's server (`next dev`) loads. */
  #packageSources(dir: string): string[] {
    const known = this.#sources.get(dir);
    if (known) return known;
    const prefix = dir ? `${dir}/` : "";
    const found = this.#ctx.files
      .map((f) => f.path)
      .filter(
        (p) =>
          p.startsWith(prefix) &&
          JS_EXTENSIONS.includes(posix.extname(p)) &&
          !/(^|\/)(node_modules|tests?|__tests__)\/|\.(test|spec)\.[^/]+$|\.d\.[mc]?ts$/.test(p.slice(prefix.length)),
      );
    this.#sources.set(dir, found);
    return found;
  }

  #prismaSchemas(): string[] {
    this.#prisma ??= this.#ctx.files.map((f) => f.path).filter((p) => p.endsWith(".prisma"));
    return this.#prisma;
  }

  #goEdges(path: string): string[] {
    const text = this.#ctx.readText(path);
    if (text === null) return [];
    this.#goModules ??= this.#ctx.files
      .filter((f) => f.path === "go.mod" || f.path.endsWith("/go.mod"))
      .flatMap((f) => {
        const m = /^module\s+(\S+)/m.exec(this.#ctx.readText(f.path) ?? "");
        return m ? [{ dir: posix.dirname(f.path) === "." ? "" : posix.dirname(f.path), module: m[1]! }] : [];
      });
    const out: string[] = [];
    for (const m of text.matchAll(/"([\w.\-~/]+)"/g)) {
      const imp = m[1]!;
      for (const { dir, module } of this.#goModules) {
        if (imp !== module && !imp.startsWith(`${module}/`)) continue;
        const rel = imp.slice(module.length + 1);
        out.push(...goFolder(this.#ctx, [dir, rel].filter(Boolean).join("/")));
      }
    }
    return out;
  }

  #packageJson(path: string): Record<string, unknown> | null {
    if (!this.#packages.has(path)) {
      let value: unknown;
      try {
        value = JSON.parse(this.#ctx.readText(path) ?? "null");
      } catch {
        value = null;
      }
      this.#packages.set(path, typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null);
    }
    return this.#packages.get(path)!;
  }

  #npmEdges(pkgJson: string, script: string): string[] {
    const scripts = this.#packageJson(pkgJson)?.scripts;
    if (typeof scripts !== "object" || scripts === null) return [];
    const all = scripts as Record<string, unknown>;
    const dir = posix.dirname(pkgJson) === "." ? "" : posix.dirname(pkgJson);
    const out: string[] = [];
    // npm runs pre<name> and post<name> around <name>.
    for (const name of [`pre${script}`, `post${script}`]) if (typeof all[name] === "string") out.push(npmNode(pkgJson, name));
    const body = all[script];
    if (typeof body === "string") out.push(...this.#commandEdges(body, dir, pkgJson));
    return out;
  }

  #makeEdges(makefile: string, target: string): string[] {
    let rules = this.#makefiles.get(makefile);
    if (!rules) {
      rules = new Map();
      const text = this.#ctx.readText(makefile);
      const dir = posix.dirname(makefile) === "." ? "" : posix.dirname(makefile);
      if (text !== null) {
        const parsed = parseMakefile(text, { path: makefile, dir, readInclude: (p) => (this.#exists(p) ? this.#ctx.readText(p) : null) });
        for (const rule of parsed.rules) for (const t of rule.targets) rules.set(t, [...(rules.get(t) ?? []), rule]);
      }
      this.#makefiles.set(makefile, rules);
    }
    const dir = posix.dirname(makefile) === "." ? "" : posix.dirname(makefile);
    const out: string[] = [];
    for (const rule of rules.get(target) ?? []) {
      for (const pre of rule.prerequisites) {
        if (rules.has(pre)) out.push(makeNode(makefile, pre));
        else {
          const file = dir ? `${dir}/${pre}` : pre;
          if (this.#exists(file)) out.push(file);
        }
      }
      for (const line of rule.recipe) out.push(...this.#commandEdges(line, dir, "", makefile));
    }
    return out;
  }

  /** What a command line (a script body, a recipe line, a shell script's text) runs in the repository. */
  #commandEdges(text: string, dir: string, pkgJson: string, makefile = ""): string[] {
    const out: string[] = [];
    const at: CommandPlace = { dir, pkgJson, makefile };
    for (const line of text.split(/\n|&&|\|\||;|\|/)) {
      const words = line
        .trim()
        .split(/\s+/)
        .map((w) => w.replace(/^["']|["']$/g, ""))
        .filter(Boolean);
      for (let i = 0; i < words.length; i++) out.push(...(this.#runnerEdges(words, i, at) ?? this.#fileEdges(words, i, at)));
    }
    return out;
  }

  /** Another npm script or make target, compose, Prisma, a server framework: null when words[i] is none of them. */
  #runnerEdges(words: readonly string[], i: number, { dir, pkgJson, makefile }: CommandPlace): string[] | null {
    const w = words[i]!;
    const next = words[i + 1];
    if (pkgJson) {
      const script = npmScriptNamed(words, i);
      if (script) return [npmNode(pkgJson, script)];
      if (SERVER_FRAMEWORKS.has(w) && (i === 0 || words[i - 1] === "npx")) return this.#packageSources(dir);
    }
    if (makefile && MAKE_WORDS.has(w) && next && /^[\w.-]+$/.test(next)) return [makeNode(makefile, next)];
    if ((w === "docker" && next === "compose") || w === "docker-compose") return COMPOSE_FILES.flatMap((f) => places(dir, f)).filter(this.#exists);
    if (w === "prisma") return this.#prismaSchemas();
    return null;
  }

  /** A module (`-m pkg`, `uvicorn app.main:app`) or a file the command names. */
  #fileEdges(words: readonly string[], i: number, { dir }: CommandPlace): string[] {
    const w = words[i]!;
    const next = words[i + 1];
    if (w === "-m" && next && /^[\w.]+$/.test(next)) {
      const mod = next.replace(/\./g, "/");
      const found = [`${mod}/__main__.py`, `${mod}.py`, `${mod}/__init__.py`].flatMap((f) => places(dir, f)).filter(this.#exists);
      return found.flatMap((f) => [f, ...packageInits(this.#ctx, f)]);
    }
    if (/^[\w.]+:\w+$/.test(w)) {
      // uvicorn app.main:app, gunicorn shop.wsgi:application
      const mod = w.slice(0, w.indexOf(":")).replace(/\./g, "/");
      return [`${mod}.py`, `${mod}/__init__.py`].flatMap((f) => places(dir, f)).filter(this.#exists);
    }
    if (!/^[\w./-]+$/.test(w) || !/[./]/.test(w)) return [];
    const word = w.replace(/^\.\//, "");
    const file = places(dir, word).find(this.#exists);
    if (file) return [file];
    // A build's output (`node dist/server.js`) stands for its source (src/server.ts).
    const built = /^(dist|build|lib|out)\/(.+)\.(m|c)?js$/.exec(word);
    const source = built ? this.#resolveJs(posix.join(dir || ".", `src/${built[2]}`)) : null;
    return source ? [source] : [];
  }
}

interface CommandPlace {
  /** Where the command runs: its package's or Makefile's folder, or a shell script's. */
  dir: string;
  /** The package.json whose scripts `npm run x` names; "" outside a package's scripts. */
  pkgJson: string;
  /** The Makefile whose targets `make x` names; "" outside a recipe. */
  makefile: string;
}

const MAKE_WORDS = new Set(["make", "$(MAKE)", "${MAKE}"]);

/** A path as the command's folder sees it, and as the repository's root does (a shell script is usually run from there). */
const places = (dir: string, p: string): string[] =>
  [...new Set([posix.normalize(dir ? `${dir}/${p}` : p), posix.normalize(p)])].filter((f) => !f.startsWith("../"));

/** The script `npm run x`, `npm start`, `yarn x`, `pnpm run x` (at words[i]) runs; null for anything else. */
function npmScriptNamed(words: readonly string[], i: number): string | null {
  const w = words[i];
  const next = words[i + 1];
  if (w === "npm") return next === "run" || next === "run-script" ? (words[i + 2] ?? null) : next === "start" || next === "test" ? next : null;
  if (w !== "yarn" && w !== "pnpm" && w !== "bun") return null;
  return (next === "run" ? words[i + 2] : next) ?? null;
}

/** A notebook's code cells, joined: what its imports are read from. */
function notebookCode(text: string | null): string | null {
  if (text === null) return null;
  try {
    const nb = JSON.parse(text) as { cells?: { cell_type?: string; source?: string | string[] }[] };
    return (nb.cells ?? [])
      .filter((c) => c.cell_type === "code")
      .map((c) => (Array.isArray(c.source) ? c.source.join("") : (c.source ?? "")))
      .join("\n");
  } catch {
    return null;
  }
}
