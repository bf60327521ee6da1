import type { Detector } from "../../detector.ts";
import type { EnvVarUse, Experiment, Parameter } from "../../model.ts";
import { children, descendants, type Node } from "../../syntax.ts";
import { envVarUses, mayReadEnvironment } from "../python/env.ts";
import { addParameterPaths, fileAccesses } from "../python/io.ts";
import { literal } from "../python/literals.ts";
import { readImports } from "../python/names.ts";
import { uniqueParameters } from "../python/params.ts";
import { frameworksOf, inTestFolder, isTestFile } from "../python/detector.ts";

// Jupyter notebooks, run with papermill: `papermill in.ipynb in.output.ipynb
// -p name value`. The parameters are the assignments in the cell tagged
// "parameters", which papermill overrides by injecting a cell after it.

interface Cell {
  type: string;
  source: string;
  tags: string[];
}

interface Notebook {
  cells: Cell[];
  language: string;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

function sourceText(v: unknown): string {
  if (typeof v === "string") return v;
  return Array.isArray(v) ? v.filter((s): s is string => typeof s === "string").join("") : "";
}

/** The cells of an nbformat 4 notebook (or the first worksheet of an nbformat 3 one); null when the JSON is not a notebook. */
function readNotebook(json: unknown): Notebook | null {
  if (!isObject(json)) return null;
  const metadata = isObject(json.metadata) ? json.metadata : {};
  const kernel = isObject(metadata.kernelspec) ? metadata.kernelspec.language : undefined;
  const info = isObject(metadata.language_info) ? metadata.language_info.name : undefined;
  const declared = [kernel, info, metadata.language].find((l): l is string => typeof l === "string" && l.trim() !== "");
  const named = declared ? declared.trim().toLowerCase().slice(0, 64) : "python";
  const language = /^python\d*$/.test(named) ? "python" : named;

  let rawCells: unknown[] | null = Array.isArray(json.cells) ? json.cells : null;
  if (!rawCells && Array.isArray(json.worksheets) && isObject(json.worksheets[0]) && Array.isArray(json.worksheets[0].cells)) {
    rawCells = json.worksheets[0].cells;
  }
  if (!rawCells) return null;
  const cells: Cell[] = [];
  for (const c of rawCells) {
    if (!isObject(c) || typeof c.cell_type !== "string") continue;
    const meta = isObject(c.metadata) ? c.metadata : {};
    const tags = Array.isArray(meta.tags) ? meta.tags.filter((t): t is string => typeof t === "string") : [];
    if (c.cell_type === "heading") {
      const level = typeof c.level === "number" && c.level >= 1 && c.level <= 6 ? c.level : 1;
      cells.push({ type: "markdown", source: `${"#".repeat(level)} ${sourceText(c.source)}`, tags });
    } else {
      cells.push({ type: c.cell_type, source: sourceText(c.cell_type === "code" && c.input !== undefined ? c.input : c.source), tags });
    }
  }
  return { cells, language };
}

/** The first markdown cell's first heading as the title, the rest of that cell as the description. */
function titleAndDescription(cells: readonly Cell[]): { title: string | null; description: string | null } {
  const first = cells.find((c) => c.type === "markdown");
  if (!first) return { title: null, description: null };
  const lines = first.source.split(/\r?\n/);
  const at = lines.findIndex((l) => /^ {0,3}#{1,6}[ \t]+\S/.test(l));
  if (at < 0) return { title: null, description: null };
  const title = lines[at]!.trim()
    .replace(/^#+\s*/, "")
    .replace(/\s+#+\s*$/, "")
    .trim();
  const rest = [...lines.slice(0, at), ...lines.slice(at + 1)].join("\n").trim();
  return { title: title || null, description: rest ? rest.slice(0, 4096) : null };
}

/** IPython's own syntax (magics, shell escapes) is not Python: those lines become blank so the rest parses and line numbers hold. */
function pythonOf(cell: Cell): string {
  if (/^\s*%%/.test(cell.source)) return "";
  return cell.source
    .split("\n")
    .map((line) => (/^\s*[%!]/.test(line) ? "" : line))
    .join("\n");
}

/** Each top-level `name = literal` of the parameters cell, with a same-line comment as its description. */
function parametersOf(root: Node): Parameter[] {
  const comments = new Map<number, string>();
  for (const c of descendants(root, "comment")) comments.set(c.startPosition.row, c.text.replace(/^#+\s*/, "").trim());
  const out: Parameter[] = [];
  const position = new Map<string, number>();
  for (const stmt of children(root)) {
    if (stmt.type !== "expression_statement" || stmt.namedChildCount !== 1) continue;
    const assignment = stmt.firstNamedChild;
    if (assignment?.type !== "assignment") continue;
    const left = assignment.childForFieldName("left");
    const lit = literal(assignment.childForFieldName("right"));
    if (left?.type !== "identifier" || !lit) continue;
    const comment = comments.get(assignment.endPosition.row);
    const base = { name: left.text, cli_option: `-p ${left.text}`, description: comment || null, required: false };
    let p: Parameter;
    if (lit.kind === "bool") {
      // papermill reads "True"/"False" back as booleans; a `boolean` category would render name=value.
      p = { ...base, value: lit.value ? "True" : "False", category: "string", choices: ["True", "False"] };
    } else {
      const category = lit.kind === "int" ? "integer" : lit.kind === "float" ? "number" : "string";
      p = { ...base, value: lit.value, category, choices: null };
    }
    // The cell runs top to bottom: a name assigned twice keeps the later value, in the earlier place.
    const earlier = position.get(p.name);
    if (earlier !== undefined) out[earlier] = p;
    else position.set(p.name, out.push(p) - 1);
  }
  return uniqueParameters(out);
}

/**
 * Moves the uses from lines of the joined code to lines of the notebook file,
 * where JSON keeps each source line as a string of its own, usually one per
 * line. One use per name (the first required one, else the first) is enough
 * for the result, and keeps the search through the file a single pass.
 */
function placeInFile(uses: readonly EnvVarUse[], codeLines: readonly string[], raw: string): EnvVarUse[] {
  const kept = new Map<string, EnvVarUse>();
  for (const use of uses) {
    const seen = kept.get(use.name);
    if (!seen || (use.required && !seen.required)) kept.set(use.name, use);
  }
  const out: EnvVarUse[] = [];
  let cursor = 0;
  let line = 1;
  for (const use of [...kept.values()].sort((a, b) => a.line - b.line)) {
    const needle = JSON.stringify(codeLines[use.line - 1] ?? "").slice(0, -1);
    const at = cursor < 0 ? -1 : raw.indexOf(needle, cursor);
    if (at < 0) {
      cursor = -1; // lines could not be followed (an unusual layout): say "the file", from line 1
      out.push({ ...use, line: 1 });
      continue;
    }
    for (let i = raw.indexOf("\n", cursor); i !== -1 && i < at; i = raw.indexOf("\n", i + 1)) line++;
    cursor = at;
    out.push({ ...use, line });
  }
  return out;
}

/** A papermill result committed next to its notebook is what a run makes, not something to run. */
const isRunOutput = (path: string, byPath: ReadonlyMap<string, unknown>): boolean =>
  path.endsWith(".output.ipynb") && byPath.has(`${path.slice(0, -".output.ipynb".length)}.ipynb`);

export const detectNotebook: Detector = (ctx) => {
  const experiments: Experiment[] = [];
  const envVars: EnvVarUse[] = [];
  const frameworks = new Set<string>();
  for (const file of ctx.files) {
    if (ctx.outOfTime()) break;
    // A notebook under tests/ or fixtures/ is something the tests load, not something to run.
    if (!file.path.endsWith(".ipynb") || isRunOutput(file.path, ctx.byPath) || inTestFolder(file.path)) continue;
    const raw = ctx.readText(file.path);
    if (raw === null) continue;
    let notebook: Notebook | null;
    try {
      notebook = readNotebook(JSON.parse(raw));
    } catch {
      continue;
    }
    if (!notebook) continue;
    const python = notebook.language === "python";
    const test = isTestFile(file.path);

    const paramsCell = notebook.cells.find((c) => c.type === "code" && c.tags.includes("parameters"));
    const parameters = python && paramsCell ? (ctx.syntax.parse("python", pythonOf(paramsCell), parametersOf)?.value ?? []) : [];

    const output = `${file.path.slice(0, -".ipynb".length)}.output.ipynb`;
    const inputs = new Set<string>();
    const outputs = new Set<string>([output]);
    if (python) {
      const code = notebook.cells
        .filter((c) => c.type === "code")
        .map(pythonOf)
        .join("\n");
      const lines = code.split("\n");
      const found = ctx.syntax.parse("python", code, (root) => {
        const imports = readImports(root);
        const files = fileAccesses(descendants(root, "call"), imports);
        const env = !test && mayReadEnvironment(code) ? envVarUses(root, imports, file.path) : [];
        return { files, env, modules: test ? [] : imports.topLevelModules };
      })?.value;
      if (found) {
        for (const f of found.files.inputs) inputs.add(f);
        for (const f of found.files.outputs) outputs.add(f);
        for (const f of frameworksOf(found.modules)) frameworks.add(f);
        envVars.push(...placeInFile(found.env, lines, raw));
      }
    }
    addParameterPaths(parameters, { inputs, outputs });

    if (/\s/.test(file.path)) continue; // the command line could not hold it unquoted
    const { title, description } = titleAndDescription(notebook.cells);
    // papermill writes the cells' output into the output notebook only; these
    // send it to the run's own stdout and stderr as well, so a notebook run
    // shows what it prints, like any other experiment.
    const command = ["papermill", file.path, output, "--stdout-file", "/dev/stdout", "--stderr-file", "/dev/stderr"];
    experiments.push({
      id: `notebook:${file.path}`,
      title: (title ?? file.path.slice(file.path.lastIndexOf("/") + 1)).slice(0, 512),
      description,
      entry_point: command.join(" "),
      command,
      language: notebook.language,
      kind: "notebook",
      path: file.path,
      inputs: [...inputs].sort().slice(0, 256),
      outputs: [...outputs].sort().slice(0, 256),
      parameters,
    });
  }
  envVars.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : a.line - b.line || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)));
  return { experiments, envVars, frameworks: [...frameworks].sort() };
};
