import type { Experiment, ExperimentKind } from "./model.ts";

// Which experiments a user most likely came to run. A transparent score over
// signals a person would use (the name, how near the root it is, whether the
// README talks about it, whether it takes parameters), not a model, so the
// order can be explained and table-tested.

const MAIN_NAMES = new Map<string, number>([
  ["train", 30],
  ["main", 30],
  ["run", 28],
  ["app", 24],
  ["start", 24],
  ["dev", 20],
  ["serve", 22],
  ["server", 22],
  ["cli", 20],
  ["predict", 22],
  ["inference", 22],
  ["infer", 22],
  ["evaluate", 18],
  ["eval", 18],
  ["experiment", 20],
  ["demo", 18],
  ["example", 14],
  ["benchmark", 10],
  ["bench", 10],
]);

// Chores: worth listing, rarely what a user came to run.
const CHORES = new Set([
  "test",
  "tests",
  "lint",
  "format",
  "fmt",
  "clean",
  "install",
  "setup",
  "build",
  "typecheck",
  "check",
  "prettier",
  "eslint",
  "help",
  "all",
  "deps",
  "precommit",
  "pre-commit",
  "prepare",
  "prepublish",
  "prepublishonly",
  "postinstall",
  "preinstall",
  "release",
  "publish",
  "docs",
  "coverage",
  "conftest",
  "manage",
]);

const KIND_WEIGHT: Record<ExperimentKind, number> = {
  "python-script": 10,
  "python-module": 9,
  "go-main": 8,
  "node-bin": 7,
  notebook: 6,
  "npm-script": 6,
  "make-target": 5,
  "shell-script": 4,
};

/** Servers run as `python3 -m <server> <app>`, which READMEs write without `python -m`. */
const WEB_SERVERS = new Set(["flask", "uvicorn", "gunicorn"]);

/** The word an experiment is known by: a script's base name, an npm script's or make target's name, a sub-command's name. */
export function experimentName(e: Experiment): string {
  const ref = e.id.slice(e.id.indexOf(":") + 1);
  // A web server (`flask --app web.main run`, `uvicorn api.main:app`): its module's name says little, so the server's.
  if (e.kind === "python-module" && WEB_SERVERS.has(e.command[2] ?? "")) return e.command[2]!;
  // A sub-command (`python:cli.py train`, `node-bin:tool serve`): the command's word.
  if (e.kind !== "npm-script" && e.kind !== "make-target" && ref.includes(" ")) return ref.slice(ref.lastIndexOf(" ") + 1).toLowerCase();
  const last = ref.split("/").filter(Boolean).pop() ?? ref;
  return last.replace(/\.[^.]+$/, "").toLowerCase();
}

export function scoreExperiment(e: Experiment, readme: string): number {
  const name = experimentName(e);
  let score = KIND_WEIGHT[e.kind];
  for (const part of name.split(/[-_.:]/)) {
    if (MAIN_NAMES.has(part)) {
      score += MAIN_NAMES.get(part)!;
      break;
    }
  }
  if (CHORES.has(name) || CHORES.has(name.split(/[-_:]/)[0] ?? "")) score -= 40;
  const depth = e.path.split("/").length - 1;
  score += depth === 0 ? 15 : depth === 1 ? 8 : 0;
  if (/(^|\/)(tests?|spec|__tests__|testdata|fixtures?)(\/|$)|(^|\/)test_[^/]*$|_test\.[a-z]+$/.test(e.path)) score -= 30;
  // Supporting material, whatever words its names hold: the project's own entry points come first.
  if (ASIDE.test(e.path)) score -= 25;
  // The repository's own package run as `python -m pkg` (its __main__.py, at the root or under src/).
  if (e.kind === "python-module" && /^(src\/)?[^/]+\/__main__\.py$/.test(e.path)) score += 15;
  score += Math.min(10, e.parameters.length * 2);
  if (readmeMention(e, readme) >= 0) score += 20;
  return score;
}

const ASIDE = /^(examples?|binder|docs?|tutorials?|samples?)\//;

/**
 * The README without the lines that install, scaffold or fetch something
 * (`npx create-x my-app`, `npm install`, `pip install -e .`, `git clone`):
 * a word there is not a way to run the project. Blanked with spaces so
 * positions stay those of the README.
 */
export function runnableText(readme: string): string {
  return readme.replace(
    /^.*\b(?:np[mx]\s+(?:init|i|install|ci|create)\b|npx\s+create-|(?:yarn|pnpm|bun)\s+(?:create|add|install|dlx\s+create-)\b|pip3?\s+install\b|git\s+clone\b|(?:brew|apt|apt-get|conda|cargo)\s+install\b).*$/gim,
    (line) => " ".repeat(line.length),
  );
}

/**
 * Where the README first shows how to run the experiment (its command as a
 * user types it: `python train.py`, `python -m pkg cmd`, `make train`,
 * `npm run dev`, `npx tool cmd`, or its file's path); -1 when it does not.
 */
export function readmeMention(e: Experiment, readme: string): number {
  if (!readme) return -1;
  const forms = [e.entry_point, e.entry_point.replace(/^python3 /, "python "), e.command.join(" ").replace(/ --$/, "")];
  if (e.path.includes(".") && e.kind !== "npm-script" && e.kind !== "make-target") forms.push(e.path);
  if (e.kind === "node-bin") forms.push(`npx ${e.title}`, e.title.includes(" ") ? e.title : `${e.title} `);
  if (e.kind === "go-main") forms.push(`go run ${e.path === "." ? "." : `./${e.path}`}`);
  // A web server's own command: `flask --app web.app run`, `uvicorn api.main:app`.
  if (e.kind === "python-module" && WEB_SERVERS.has(e.command[2] ?? "")) forms.push(e.command.slice(2).join(" "));
  if (e.kind === "npm-script" && !e.command.includes("--prefix")) {
    // `npm start`, `yarn dev`, `pnpm start`, `pnpm run dev`, `bun run dev`: the same script.
    const name = e.title;
    forms.push(`yarn ${name}`, `yarn run ${name}`, `pnpm ${name}`, `pnpm run ${name}`, `bun run ${name}`);
    if (name === "start" || name === "test") forms.push(`npm ${name}`);
  }
  const text = runnableText(readme);
  const at = forms.map((f) => wordAt(text, f)).filter((i) => i >= 0);
  const folder = folderLink(e, text);
  if (folder >= 0) at.push(folder);
  return at.length ? Math.min(...at) : -1;
}

/** Where form first appears as whole words (`yarn dev` is not `yarn dev:server`); -1 when it does not. */
function wordAt(text: string, form: string): number {
  for (let i = text.indexOf(form); i >= 0; i = text.indexOf(form, i + 1)) {
    const after = text[i + form.length];
    if (after === undefined || !/[\w:-]/.test(after)) return i;
  }
  return -1;
}

/** A script named like a folder's main one (main.py, train.py, index.js): its folder is where a README links to it. */
const FOLDER_MAIN = /^(main|train|run|app|index|__main__)\.[a-z]+$/;

/**
 * Where the README links the folder of a folder's main script (`[VAE](vae/)`,
 * `(./vae)`, `(vae/README.md)`, a GitHub `tree/<branch>/vae` URL); -1 when it does not.
 */
function folderLink(e: Experiment, text: string): number {
  const slash = e.path.lastIndexOf("/");
  if (slash < 0 || !FOLDER_MAIN.test(e.path.slice(slash + 1)) || e.kind === "npm-script" || e.kind === "make-target") return -1;
  const folder = e.path.slice(0, slash).replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const m = new RegExp(`\\]\\((?:\\./)?${folder}/?(?:README\\.md)?\\)|\\]\\(https?://[^)\\s]*/tree/[^/)\\s]+/${folder}/?\\)`).exec(text);
  return m ? m.index : -1;
}

/**
 * Up to `max` experiment ids, most likely first. Ties go to the one the README
 * shows first (a repository of many examples points at its canonical ones),
 * then to the id's order, so the result is deterministic.
 */
export function rankExperiments(experiments: readonly Experiment[], readme: string, max = 3): string[] {
  const scored = experiments.map((e) => {
    const at = readmeMention(e, readme);
    return { id: e.id, score: scoreExperiment(e, readme), at: at < 0 ? Number.MAX_SAFE_INTEGER : at };
  });
  scored.sort((a, b) => b.score - a.score || a.at - b.at || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const positive = scored.filter((s) => s.score > 0);
  return (positive.length ? positive : scored.slice(0, 1)).slice(0, max).map((s) => s.id);
}
