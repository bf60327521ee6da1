import type { Parameter } from "../../model.ts";
import type { FileRole as Role } from "./params.ts";
import type { Node } from "../../syntax.ts";
import { callArguments, stringLiteral, type CallArguments } from "./literals.ts";
import { lastSegment, qualifiedName, type PythonImports } from "./names.ts";

// Files a program reads and writes, where the source spells the path out:
// literal paths handed to open() and to the usual load/save functions, and
// the defaults of parameters whose names say they are inputs or outputs.

export interface FileAccesses {
  inputs: Set<string>;
  outputs: Set<string>;
}

/** Which argument holds the path: a position and the keyword names it also goes by. */
interface PathArgument {
  role: Role;
  position: number;
  keywords: string[];
}

const FUNCTIONS = new Map<string, PathArgument>([
  ["numpy.load", { role: "input", position: 0, keywords: ["file"] }],
  ["numpy.loadtxt", { role: "input", position: 0, keywords: ["fname"] }],
  ["numpy.genfromtxt", { role: "input", position: 0, keywords: ["fname"] }],
  ["numpy.save", { role: "output", position: 0, keywords: ["file"] }],
  ["numpy.savez", { role: "output", position: 0, keywords: ["file"] }],
  ["numpy.savez_compressed", { role: "output", position: 0, keywords: ["file"] }],
  ["numpy.savetxt", { role: "output", position: 0, keywords: ["fname"] }],
  ["torch.load", { role: "input", position: 0, keywords: ["f"] }],
  ["torch.save", { role: "output", position: 1, keywords: ["f"] }],
  ["joblib.load", { role: "input", position: 0, keywords: ["filename"] }],
  ["joblib.dump", { role: "output", position: 1, keywords: ["filename"] }],
  ["matplotlib.pyplot.savefig", { role: "output", position: 0, keywords: ["fname"] }],
]);

/** Methods that write a file whatever object they are called on (a DataFrame, a figure, a model). */
const WRITING_METHODS = new Map<string, PathArgument>([
  ["to_csv", { role: "output", position: 0, keywords: ["path_or_buf"] }],
  ["to_json", { role: "output", position: 0, keywords: ["path_or_buf"] }],
  ["to_parquet", { role: "output", position: 0, keywords: ["path"] }],
  ["to_excel", { role: "output", position: 0, keywords: ["excel_writer"] }],
  ["to_pickle", { role: "output", position: 0, keywords: ["path"] }],
  ["to_feather", { role: "output", position: 0, keywords: ["path"] }],
  ["savefig", { role: "output", position: 0, keywords: ["fname"] }],
  ["save_pretrained", { role: "output", position: 0, keywords: ["save_directory"] }],
  ["save_model", { role: "output", position: 0, keywords: [] }],
  ["save_weights", { role: "output", position: 0, keywords: ["filepath"] }],
]);

const OPEN_FUNCTIONS = new Set(["open", "io.open", "builtins.open", "codecs.open"]);
const PANDAS_READER: PathArgument = { role: "input", position: 0, keywords: ["filepath_or_buffer", "path", "io", "path_or_buf"] };

export function fileAccesses(calls: readonly Node[], imports: PythonImports): FileAccesses {
  const out: FileAccesses = { inputs: new Set(), outputs: new Set() };
  const record = (role: Role, node: Node | undefined) => {
    const path = literalPath(node);
    if (path) (role === "input" ? out.inputs : out.outputs).add(path);
  };
  for (const call of calls) {
    const callee = call.childForFieldName("function");
    const name = qualifiedName(callee, imports);
    if (!name) continue;
    const args = callArguments(call);
    if (OPEN_FUNCTIONS.has(name)) {
      const modeNode = args.positional[1] ?? args.keywords.get("mode");
      const mode = modeNode ? stringLiteral(modeNode) : "r";
      if (mode !== null) record(/[wax+]/.test(mode) ? "output" : "input", pathArgument(args, { role: "input", position: 0, keywords: ["file"] }));
      continue;
    }
    const known =
      FUNCTIONS.get(name) ??
      (name.startsWith("pandas.read_") ? PANDAS_READER : undefined) ??
      (callee?.type === "attribute" ? WRITING_METHODS.get(lastSegment(name)) : undefined);
    if (known) record(known.role, pathArgument(args, known));
  }
  return out;
}

function pathArgument(args: CallArguments, where: PathArgument): Node | undefined {
  const byPosition = args.positional[where.position];
  if (byPosition) return byPosition;
  for (const k of where.keywords) {
    const node = args.keywords.get(k);
    if (node) return node;
  }
  return undefined;
}

/** A string literal that names a file: not a URL, not "-" (stdin/stdout); "./" dropped. */
function literalPath(node: Node | undefined): string | null {
  const s = stringLiteral(node);
  return s === null ? null : cleanPath(s);
}

export function cleanPath(raw: string): string | null {
  let s = raw.trim();
  while (s.startsWith("./")) s = s.slice(2);
  if (!s || s === "." || s === "-" || s.length > 4096 || s.includes("://") || /[\n\r\0{}]/.test(s)) return null;
  return s;
}

const INPUT_WORDS = new Set(["in", "input", "inputs", "data", "dataset", "datasets", "indir", "infile"]);
const OUTPUT_WORDS = new Set(["out", "output", "outputs", "outdir", "outfile", "save", "checkpoint", "checkpoints", "ckpt"]);
const PATH_WORDS = new Set(["path", "dir", "file", "folder", "root", "filename", "dirname", "filepath"]);

/**
 * Whether a parameter names a file or folder the program reads or writes,
 * from its words (`data_dir` reads, `output_path` and `model_dir` write).
 * Parameters typed as strings count when a word says they are paths, since
 * many scripts never use `type=Path`.
 */
export function parameterRole(p: Parameter): Role | null {
  const words = p.name
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
  const pathLike = p.category === "path" || (p.category === "string" && words.some((w) => PATH_WORDS.has(w) || /(dir|path|file)$/.test(w)));
  if (!pathLike) return null;
  if (words.some((w) => OUTPUT_WORDS.has(w)) || p.name.toLowerCase().includes("model_dir")) return "output";
  if (words.some((w) => INPUT_WORDS.has(w))) return "input";
  return null;
}

/** Adds the defaults of file parameters; `roles` holds what a parameter's type already says. */
export function addParameterPaths(params: readonly Parameter[], into: FileAccesses, roles: ReadonlyMap<string, Role> = new Map()): void {
  for (const p of params) {
    const role = typeof p.value === "string" ? (roles.get(p.name) ?? parameterRole(p)) : null;
    const path = role && cleanPath(p.value as string);
    if (path) (role === "input" ? into.inputs : into.outputs).add(path);
  }
}
