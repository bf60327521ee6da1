import type { AnalyzerContext } from "./detector.ts";
import { countLines } from "./files.ts";

// What the repository is written in, by file extension (and the few file
// names that say it themselves), counted in files, lines and bytes.

export interface LanguageStat {
  name: string;
  files: number;
  lines: number;
  bytes: number;
}

const BY_EXTENSION: Record<string, string> = {
  py: "Python",
  pyi: "Python",
  pyw: "Python",
  pyx: "Cython",
  js: "JavaScript",
  mjs: "JavaScript",
  cjs: "JavaScript",
  jsx: "JavaScript",
  ts: "TypeScript",
  tsx: "TypeScript",
  mts: "TypeScript",
  cts: "TypeScript",
  go: "Go",
  rs: "Rust",
  java: "Java",
  kt: "Kotlin",
  kts: "Kotlin",
  c: "C",
  h: "C",
  cc: "C++",
  cpp: "C++",
  cxx: "C++",
  "c++": "C++",
  hh: "C++",
  hpp: "C++",
  hxx: "C++",
  cu: "CUDA",
  cuh: "CUDA",
  cs: "C#",
  rb: "Ruby",
  php: "PHP",
  sh: "Shell",
  bash: "Shell",
  zsh: "Shell",
  ipynb: "Jupyter Notebook",
  html: "HTML",
  htm: "HTML",
  css: "CSS",
  scss: "SCSS",
  sql: "SQL",
  r: "R",
  jl: "Julia",
  scala: "Scala",
  swift: "Swift",
  lua: "Lua",
  pl: "Perl",
  dart: "Dart",
  ex: "Elixir",
  exs: "Elixir",
  hs: "Haskell",
  vue: "Vue",
  svelte: "Svelte",
  proto: "Protocol Buffers",
  md: "Markdown",
  markdown: "Markdown",
  rst: "reStructuredText",
  tex: "TeX",
  yml: "YAML",
  yaml: "YAML",
  json: "JSON",
  toml: "TOML",
  mk: "Makefile",
  dockerfile: "Dockerfile",
};

const BY_NAME: Record<string, string> = {
  makefile: "Makefile",
  gnumakefile: "Makefile",
  dockerfile: "Dockerfile",
  containerfile: "Dockerfile",
  gemfile: "Ruby",
  rakefile: "Ruby",
  jenkinsfile: "Groovy",
};

// Interpreters a `#!` line may name, for scripts without an extension.
const BY_INTERPRETER: Record<string, string> = {
  sh: "Shell",
  bash: "Shell",
  dash: "Shell",
  zsh: "Shell",
  python: "Python",
  python3: "Python",
  node: "JavaScript",
  ruby: "Ruby",
  perl: "Perl",
};

/** Data and prose formats: counted, but not what a project "is written in". */
export const NON_CODE = new Set(["Markdown", "reStructuredText", "TeX", "YAML", "JSON", "TOML"]);

/** Build files: code, but a project is only "a Makefile project" when it has nothing else. */
export const BUILD_FILES = new Set(["Makefile", "Dockerfile"]);

/** The language a path's name says, or null when the name does not tell (then a shebang may). */
export function languageOfPath(path: string): string | null {
  const name = path.slice(path.lastIndexOf("/") + 1).toLowerCase();
  if (BY_NAME[name]) return BY_NAME[name];
  if (name.startsWith("dockerfile.") || name.startsWith("containerfile.")) return "Dockerfile";
  const dot = name.lastIndexOf(".");
  if (dot <= 0) return null;
  return BY_EXTENSION[name.slice(dot + 1)] ?? null;
}

export function languageOfShebang(text: string): string | null {
  if (!text.startsWith("#!")) return null;
  const end = text.indexOf("\n");
  const words = text
    .slice(2, Math.min(end < 0 ? text.length : end, 200))
    .trim()
    .split(/\s+/);
  const base = (w: string) => w.slice(w.lastIndexOf("/") + 1);
  let interpreter = base(words[0] ?? "");
  if (interpreter === "env") interpreter = base(words.slice(1).find((w) => !w.startsWith("-") && !w.includes("=")) ?? "");
  return BY_INTERPRETER[interpreter.replace(/[0-9.]+$/, "")] ?? BY_INTERPRETER[interpreter] ?? null;
}

export interface LanguageCount {
  languages: LanguageStat[];
  /** Lines were not counted for some files because time ran out. */
  partial: boolean;
}

/**
 * Counts by language. Lines come from reading each file; a file that cannot
 * be read counts with 0 lines, and once time runs out files are still
 * counted (by name and size) but no longer read.
 */
export function countLanguages(ctx: AnalyzerContext): LanguageCount {
  const stats = new Map<string, LanguageStat>();
  let partial = false;
  for (const file of ctx.files) {
    let language = languageOfPath(file.path);
    const extensionless = language === null && !file.path.slice(file.path.lastIndexOf("/") + 1).includes(".");
    // Only an extensionless executable can be a script known by its shebang; anything else unknown is not read.
    if (language === null && !(extensionless && file.executable)) continue;
    let lines = 0;
    if (!partial && ctx.outOfTime()) partial = true;
    if (!partial) {
      const text = ctx.readText(file.path);
      if (text !== null) {
        language ??= languageOfShebang(text);
        lines = countLines(text);
      } else if (ctx.isBinary?.(file.path)) continue; // a name is not a language when the bytes say otherwise
    }
    if (language === null) continue;
    const stat = stats.get(language) ?? { name: language, files: 0, lines: 0, bytes: 0 };
    stat.files += 1;
    stat.lines += lines;
    stat.bytes += file.size;
    stats.set(language, stat);
  }
  const languages = [...stats.values()].sort((a, b) => b.lines - a.lines || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { languages, partial };
}
