import { posix } from "node:path";
import type { Experiment } from "../../model.ts";
import { moduleOf } from "./web.ts";

// Where a script in a sub-folder must be started from, read off its code as
// a person would before typing the command:
// - package-relative imports (`from .db import engine`) only work in a
//   module: `python3 -m tools.export`;
// - an import of the repository's own top-level package (`from newsletter
//   import tasks` in scripts/send.py), which `python3 scripts/send.py` cannot
//   find (only the script's folder is on the path) unless the project is
//   installed: `python3 -m scripts.send`, run from the root;
// - files it opens by paths relative to its own folder (`open("raw/x.csv")`
//   where series/raw/x.csv is in the repository and raw/x.csv is not,
//   `../data/x.csv`): `cd series && python3 make_dataset.py`.
// Otherwise `python3 <path>` from the root, as before.

export interface LaunchFacts {
  /** The file has `from . import x` / `from .m import x`. */
  relativeImport: boolean;
  /** First names of the absolute modules it imports at its top level. */
  importedRoots: readonly string[];
}

export interface RepoView {
  hasFile(path: string): boolean;
  hasFolder(path: string): boolean;
  /** pip installs the project itself (a build system, setup.py): its packages import from anywhere. */
  installsProject: boolean;
  /** Scripts a README runs from their own folder (readmeFolderRuns). */
  readmeFolderRuns: ReadonlySet<string>;
}

export type Launch = { how: "module"; module: string } | { how: "folder"; dir: string } | null;

export function launchOf(path: string, facts: LaunchFacts, files: { inputs: readonly string[]; outputs: readonly string[] }, repo: RepoView): Launch {
  const dir = posix.dirname(path);
  if (dir === ".") return null;
  const module = moduleOf(path);
  if (module && facts.relativeImport) return { how: "module", module };
  const fromRoot = (name: string) => repo.hasFile(`${name}.py`) || repo.hasFile(`${name}/__init__.py`);
  const fromOwnFolder = (name: string) => repo.hasFile(`${dir}/${name}.py`) || repo.hasFolder(`${dir}/${name}`);
  if (module && !repo.installsProject && facts.importedRoots.some((r) => fromRoot(r) && !fromOwnFolder(r))) return { how: "module", module };
  if (!/^[\w./-]+$/.test(dir)) return null;
  const exists = (p: string) => repo.hasFile(p) || repo.hasFolder(p);
  const ownRelative = [...files.inputs, ...files.outputs].some((p) => {
    if (p.startsWith("/") || p.includes("$") || p.includes("{")) return false;
    const joined = posix.normalize(`${dir}/${p}`);
    if (joined.startsWith("../") || joined === "..") return false;
    // `../data/x.csv` only means something from the script's own folder.
    if (p.startsWith("../")) return exists(joined) || exists(posix.dirname(joined));
    // The file, or for a new file the folder it goes in, is beside the script and not at the root.
    const top = p.replace(/^\.\//, "").split("/")[0]!;
    const beside = exists(joined) || (posix.dirname(joined) !== dir && exists(posix.dirname(joined)));
    return beside && !exists(p) && !exists(top);
  });
  return ownRelative || repo.readmeFolderRuns.has(path) ? { how: "folder", dir } : null;
}

/**
 * Scripts a README runs from their own folder: `python make_dataset.py` in
 * series/README.md, or `cd series` then `python make_dataset.py` (on one
 * line with && or on the lines after it, until the code block ends).
 */
export function readmeFolderRuns(docs: readonly { dir: string; text: string }[], hasFile: (path: string) => boolean): Set<string> {
  const out = new Set<string>();
  const add = (dirs: readonly string[], script: string) => {
    if (script.includes("/")) return;
    const path = dirs.map((d) => posix.normalize(`${d}/${script}`)).find((p) => !p.startsWith(".") && p.includes("/") && hasFile(p));
    if (path) out.add(path);
  };
  for (const { dir, text } of docs) {
    const own = dir.replace(/\/$/, "");
    // A folder's README may say `cd series` from the root, as a reader on the repository's page does.
    let cd: string[] = [];
    for (const line of text.split(/\r?\n/)) {
      if (/^\s*(```|~~~)/.test(line)) cd = [];
      for (const part of line.split(/&&|;/)) {
        const to = /^\s*(?:\$\s*)?cd\s+([\w./-]+)\s*$/.exec(part)?.[1];
        if (to) cd = [...new Set([own ? `${own}/${to}` : to, to])];
        const run = /^\s*(?:\$\s*)?python[0-9.]*\s+(?:-u\s+)?([\w.-]+\.py)\b/.exec(part);
        if (run) add(cd.length ? cd : [own], run[1]!);
      }
    }
  }
  return out;
}

/** The experiment started the way the launch says; its files as the repository's root sees them. */
export function launched(e: Experiment, launch: Launch): Experiment {
  if (!launch || e.command[0] !== "python3" || e.command[1] !== e.path) return e;
  if (launch.how === "module") {
    const command = ["python3", "-m", launch.module, ...e.command.slice(2)];
    return { ...e, command, entry_point: command.join(" ") };
  }
  const name = e.path.slice(launch.dir.length + 1);
  const rest = e.command.slice(2);
  // The run appends its arguments after the command: "$@" hands them to the script.
  const command = ["sh", "-c", `cd ${launch.dir} && exec python3 ${[name, ...rest].join(" ")} "$@"`, "sh"];
  const rebase = (p: string) => (p.startsWith("/") ? p : posix.normalize(`${launch.dir}/${p}`));
  return {
    ...e,
    command,
    entry_point: `cd ${launch.dir} && python3 ${[name, ...rest].join(" ")}`,
    inputs: [...new Set(e.inputs.map(rebase))].sort(),
    outputs: [...new Set(e.outputs.map(rebase))].sort(),
  };
}
