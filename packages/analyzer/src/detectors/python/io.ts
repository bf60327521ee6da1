import type { Parameter } from "../../model.ts";
import type { FileRole as Role } from "./params.ts";
import { children, type Node } from "../../syntax.ts";
import { callArguments, stringLiteral, type CallArguments } from "./literals.ts";
import { lastSegment, qualifiedName, type PythonImports } from "./names.ts";

// Files a program reads and writes, where the source spells the path out:
// paths handed to open() and to the usual load/save functions, written as
// literals or built from the program's own parameters' defaults
// (`os.path.join(args.out, "model.pt")`, `f"{args.out}/loss.png"`,
// `Path(args.out) / "metrics.csv"`), and the defaults of parameters whose
// names say they are inputs or outputs.

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
  ["to_markdown", { role: "output", position: 0, keywords: ["buf"] }],
  ["to_html", { role: "output", position: 0, keywords: ["buf"] }],
  ["to_latex", { role: "output", position: 0, keywords: ["buf"] }],
  ["to_hdf", { role: "output", position: 0, keywords: ["path_or_buf"] }],
  ["to_xml", { role: "output", position: 0, keywords: ["path_or_buffer"] }],
]);

const OPEN_FUNCTIONS = new Set(["open", "io.open", "builtins.open", "codecs.open"]);
const PANDAS_READER: PathArgument = { role: "input", position: 0, keywords: ["filepath_or_buffer", "path", "io", "path_or_buf"] };

/**
 * The files the calls read and write. `values` holds the string defaults of the
 * program's parameters and constants by name, for paths built from them.
 */
export function fileAccesses(calls: readonly Node[], imports: PythonImports, values: ReadonlyMap<string, string> = new Map()): FileAccesses {
  const out: FileAccesses = { inputs: new Set(), outputs: new Set() };
  const record = (role: Role, node: Node | undefined) => {
    const raw = pathValue(node, imports, values, 0);
    const path = raw === null ? null : cleanPath(raw);
    if (path) (role === "input" ? out.inputs : out.outputs).add(path);
  };
  for (const call of calls) {
    const callee = call.childForFieldName("function");
    // A method of a computed object (`pd.concat(rows).to_csv(...)`) has no qualified name, only its own.
    const name = qualifiedName(callee, imports) ?? (callee?.type === "attribute" ? (callee.childForFieldName("attribute")?.text ?? null) : null);
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

const JOINS = new Set(["os.path.join", "posixpath.join", "pathlib.Path", "pathlib.PurePath", "pathlib.PosixPath", "str", "os.fspath"]);

/**
 * A path as the program computes it from literals and from what `values`
 * knows: `args.out` or `out` (a parameter's or constant's string default),
 * `os.path.join(...)`, `Path(...)`, `a / b` on paths, `a + b` on strings and
 * f-strings of those. Null for anything else.
 */
function pathValue(node: Node | null | undefined, imports: PythonImports, values: ReadonlyMap<string, string>, depth: number): string | null {
  if (!node || depth > 8) return null;
  const literal = stringLiteral(node);
  if (literal !== null) return literal;
  const part = (n: Node | null | undefined) => pathValue(n, imports, values, depth + 1);
  switch (node.type) {
    case "identifier":
      return values.get(node.text) ?? null;
    case "attribute": {
      // `args.out`, `opt.out`, `self.args.out`: the parameter's default.
      const name = node.childForFieldName("attribute")?.text;
      return name && values.size ? (values.get(name) ?? null) : null;
    }
    case "parenthesized_expression":
      return part(node.firstNamedChild);
    case "binary_operator": {
      const op = node.childForFieldName("operator")?.type;
      const [a, b] = [part(node.childForFieldName("left")), part(node.childForFieldName("right"))];
      if (a === null || b === null) return null;
      return op === "/" ? `${a.replace(/\/+$/, "")}/${b}` : op === "+" ? a + b : null;
    }
    case "string":
      return fString(node, part);
    case "call":
      return joinedPath(node, imports, part);
    default:
      return null;
  }
}

/** `os.path.join(a, b)`, `Path(a, b)`, `str(a)`: the parts joined as the function does (an absolute part starts again). */
function joinedPath(call: Node, imports: PythonImports, part: (n: Node | null | undefined) => string | null): string | null {
  const name = qualifiedName(call.childForFieldName("function"), imports);
  const args = callArguments(call);
  if (!name || !JOINS.has(name) || args.splat || args.keywords.size || !args.positional.length) return null;
  const parts = args.positional.map(part);
  if (parts.some((p) => p === null)) return null;
  return (parts as string[]).reduce((acc, p) => (p.startsWith("/") ? p : acc ? `${acc.replace(/\/+$/, "")}/${p}` : p), "");
}

/** An f-string whose placeholders are all paths pathValue can tell (no format specs). */
function fString(node: Node, part: (n: Node | null | undefined) => string | null): string | null {
  const start = node.firstChild?.text.toLowerCase() ?? "";
  if (!start.includes("f") || start.includes("b")) return null;
  let out = "";
  for (const c of children(node)) {
    if (c.type === "string_content") out += c.text;
    else if (c.type === "interpolation") {
      if (c.childForFieldName("format_specifier") || c.childForFieldName("type_conversion")) return null;
      const v = part(c.childForFieldName("expression"));
      if (v === null) return null;
      out += v;
    }
  }
  return out;
}

export function cleanPath(raw: string): string | null {
  if (raw.includes("://")) return null; // a URL
  let s = raw.trim().replace(/\/{2,}/g, "/");
  while (s.startsWith("./")) s = s.slice(2);
  // Not stdin/stdout, not a glob or a template.
  if (!s || s === "." || s === "-" || s.length > 4096 || /[\n\r\0{}*?[\]%]/.test(s)) return null;
  return s;
}

const INPUT_WORDS = new Set(["in", "input", "inputs", "data", "dataset", "datasets", "indir", "infile"]);
const OUTPUT_WORDS = new Set(["out", "output", "outputs", "outdir", "outfile", "save", "checkpoint", "checkpoints", "ckpt"]);
/** Names that alone are an output folder whatever their value looks like (`--out runs`). */
const BARE_OUTPUT = new Set(["out", "output", "outdir", "logdir"]);
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
  const value = typeof p.value === "string" ? p.value : "";
  // `--data data/cifar10`, `--out runs`: a name that says input or output, with a value that looks like a path.
  const named =
    p.category === "string" &&
    /^[\w.~/-]+$/.test(value) &&
    (BARE_OUTPUT.has(p.name.toLowerCase()) || (words.some((w) => INPUT_WORDS.has(w) || OUTPUT_WORDS.has(w)) && /\/|\.[A-Za-z0-9]{1,6}$/.test(value)));
  const pathLike = named || p.category === "path" || (p.category === "string" && words.some((w) => PATH_WORDS.has(w) || /(dir|path|file)$/.test(w)));
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
