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

// The runtime and the grammars are loaded once per thread (loading them twice
// at once breaks the runtime); each Syntax gets parsers of its own.
let languages: Promise<Map<Grammar, Language>> | null = null;

function loadLanguages(): Promise<Map<Grammar, Language>> {
  languages ??= (async () => {
    const require = createRequire(import.meta.url);
    await TreeSitter.Parser.init();
    const out = new Map<Grammar, Language>();
    for (const [grammar, file] of Object.entries(GRAMMAR_FILES) as [Grammar, string][]) {
      out.set(grammar, await TreeSitter.Language.load(require.resolve(`@vscode/tree-sitter-wasm/wasm/${file}`)));
    }
    return out;
  })();
  languages.catch(() => (languages = null));
  return languages;
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

  private constructor(parsers: Map<Grammar, ParserType>, timeoutMs: number) {
    this.#parsers = parsers;
    this.#timeoutMs = timeoutMs;
  }

  static async load(options: { timeoutMsPerFile?: number } = {}): Promise<Syntax> {
    const languages = await loadLanguages();
    const parsers = new Map<Grammar, ParserType>();
    for (const [grammar, language] of languages) {
      const parser = new TreeSitter.Parser();
      parser.setLanguage(language);
      parsers.set(grammar, parser);
    }
    return new Syntax(parsers, options.timeoutMsPerFile ?? 2000);
  }

  /**
   * Parses source and calls fn with the root node; null when the parse was
   * cancelled by the per-file time budget. Syntax errors do not stop it: fn
   * sees the partial tree (ERROR nodes where the source made no sense).
   */
  parse<T>(grammar: Grammar, source: string, fn: (root: Node) => T): ParseOutcome<T> | null {
    const parser = this.#parsers.get(grammar);
    if (!parser) throw new Error(`no grammar for ${grammar}`);
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
