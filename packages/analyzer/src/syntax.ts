import { createRequire } from "node:module";
import TreeSitter from "@vscode/tree-sitter-wasm";
import type { Language, Node, Parser as ParserType } from "@vscode/tree-sitter-wasm";

// Real parsers for the languages the analyzer reads: tree-sitter grammars
// compiled to WebAssembly, so they run in any Node without a native build.
// Trees live in WASM memory and must be freed; parse() hands the root to a
// callback and frees the tree after it, so no detector can leak one.

export type { Node };
export type Grammar = "python" | "go" | "javascript" | "typescript" | "tsx" | "bash";

const GRAMMAR_FILES: Record<Grammar, string> = {
  python: "tree-sitter-python.wasm",
  go: "tree-sitter-go.wasm",
  javascript: "tree-sitter-javascript.wasm",
  typescript: "tree-sitter-typescript.wasm",
  tsx: "tree-sitter-tsx.wasm",
  bash: "tree-sitter-bash.wasm",
};

export const GRAMMARS = Object.keys(GRAMMAR_FILES) as Grammar[];

// The runtime and each grammar are loaded once per thread, when first needed
// (a grammar costs memory for its compiled code even if it never parses a
// file), one at a time: loading two at once breaks the runtime.
let runtime: Promise<void> | null = null;
let queue: Promise<unknown> = Promise.resolve();
const languages = new Map<Grammar, Promise<Language>>();

function loadLanguage(grammar: Grammar): Promise<Language> {
  let loading = languages.get(grammar);
  if (!loading) {
    const require = createRequire(import.meta.url);
    runtime ??= TreeSitter.Parser.init().catch((err: unknown) => {
      runtime = null;
      throw err;
    });
    const init = runtime;
    loading = queue.then(async () => {
      await init;
      return TreeSitter.Language.load(require.resolve(`@vscode/tree-sitter-wasm/wasm/${GRAMMAR_FILES[grammar]}`));
    });
    queue = loading.catch(() => undefined);
    languages.set(grammar, loading);
    loading.catch(() => languages.delete(grammar));
  }
  return loading;
}

export interface ParseOutcome<T> {
  value: T;
  /** The source has syntax errors; the tree still holds what could be parsed around them. */
  hasError: boolean;
}

export class Syntax {
  readonly #parsers: Map<Grammar, ParserType>;
  readonly #timeoutMs: number;
  /** Files whose parse was given up on (time budget) or that had syntax errors. */
  unparsable = 0;
  parsed = 0;

  private constructor(timeoutMs: number) {
    this.#parsers = new Map();
    this.#timeoutMs = timeoutMs;
  }

  /** A Syntax with the given grammars ready (all of them unless told). */
  static async load(options: { timeoutMsPerFile?: number; grammars?: Iterable<Grammar> } = {}): Promise<Syntax> {
    const syntax = new Syntax(options.timeoutMsPerFile ?? 2000);
    await syntax.ensure(options.grammars ?? GRAMMARS);
    return syntax;
  }

  /** Makes these grammars ready to parse with, loading those not loaded yet. */
  async ensure(grammars: Iterable<Grammar>): Promise<void> {
    for (const grammar of grammars) {
      if (this.#parsers.has(grammar)) continue;
      const language = await loadLanguage(grammar);
      if (this.#parsers.has(grammar)) continue;
      const parser = new TreeSitter.Parser();
      parser.setLanguage(language);
      this.#parsers.set(grammar, parser);
    }
  }

  /** How long one file may take to parse before it is given up on. */
  get timeoutMs(): number {
    return this.#timeoutMs;
  }

  has(grammar: Grammar): boolean {
    return this.#parsers.has(grammar);
  }

  /**
   * Parses source and calls fn with the root node; null when the parse was
   * cancelled by the per-file time budget. Syntax errors do not stop it: fn
   * sees the partial tree (ERROR nodes where the source made no sense).
   */
  parse<T>(grammar: Grammar, source: string, fn: (root: Node) => T): ParseOutcome<T> | null {
    const parser = this.#parsers.get(grammar);
    if (!parser) throw new Error(`grammar ${grammar} is not loaded (Syntax.ensure)`);
    const deadline = Date.now() + this.#timeoutMs;
    let tree;
    try {
      tree = parser.parse(source, null, { progressCallback: () => Date.now() > deadline });
    } catch {
      tree = null;
    }
    // A cancelled parse leaves the parser mid-document; reset it for the next file.
    if (!tree) {
      parser.reset();
      this.unparsable += 1;
      return null;
    }
    try {
      this.parsed += 1;
      const hasError = tree.rootNode.hasError;
      if (hasError) this.unparsable += 1;
      return { value: fn(tree.rootNode), hasError };
    } finally {
      tree.delete();
    }
  }
}

// Helpers that every detector needs.

/** The named children of a node, without the nulls the binding's typing allows. */
export function children(node: Node): Node[] {
  return node.namedChildren.filter((c): c is Node => c !== null);
}

export function descendants(node: Node, types: string | string[]): Node[] {
  return node.descendantsOfType(types).filter((c): c is Node => c !== null);
}

/** 1-based line of a node, as editors count. */
export const lineOf = (node: Node): number => node.startPosition.row + 1;
