import type { AnalyzerContext } from "./detector.ts";

// The README's title and first paragraph of prose, read with a small block
// parser for Markdown and reStructuredText (enough to tell headings, code,
// lists, tables, HTML and badge rows from sentences).

export interface ReadmeFacts {
  title: string | null;
  description: string | null;
}

const README_NAMES = ["readme.md", "readme.markdown", "readme.rst", "readme.txt", "readme"];
const MAX_TITLE = 200;
const MAX_DESCRIPTION = 500;
// The title and first paragraph sit near the top; reading no further bounds the work on a huge README.
const MAX_README_CHARS = 100_000;
// Inline markup is cleaned with regular expressions that may backtrack; no prose paragraph is this long.
const MAX_BLOCK_CHARS = 5_000;

export interface Readme {
  path: string;
  text: string;
}

/** The root README, preferring Markdown, then reStructuredText, then plain text. */
export function findReadme(ctx: AnalyzerContext): Readme | null {
  const candidates = ctx.files
    .filter((f) => !f.path.includes("/") && README_NAMES.includes(f.path.toLowerCase()))
    .sort((a, b) => README_NAMES.indexOf(a.path.toLowerCase()) - README_NAMES.indexOf(b.path.toLowerCase()) || (a.path < b.path ? -1 : 1));
  for (const f of candidates) {
    const text = ctx.readText(f.path);
    if (text !== null) return { path: f.path, text };
  }
  return null;
}

export function readmeFacts(readme: Readme): ReadmeFacts {
  const text = readme.text.slice(0, MAX_README_CHARS);
  const blocks = /\.rst$/i.test(readme.path) ? rstBlocks(text) : markdownBlocks(text);
  // The title: the first heading that names the project, not a section's name
  // ("Installation", "Usage", "Table of contents") above which the name sat in a logo.
  const titleIndex = titleHeading(blocks);
  const title = titleIndex >= 0 ? titleOf(blocks[titleIndex]!.text) : null;
  const prose = (b: Block) => b.kind === "paragraph" && /\p{L}/u.test(b.text);
  // The opening description: the first paragraph of prose after the title,
  // not one in an Installation or Usage section (or a sub-section of one),
  // not a command line or the line that introduces one.
  const open: { level: number; setup: boolean }[] = [];
  const inSetup = () => open.some((h) => h.setup);
  let paragraph: Block | undefined;
  let fallback: Block | undefined;
  for (const b of blocks.slice(titleIndex + 1)) {
    if (b.kind === "heading") {
      while (open.length && open.at(-1)!.level >= (b.level ?? 1)) open.pop();
      open.push({ level: b.level ?? 1, setup: SETUP_HEADING.test(b.text) });
    } else if (prose(b) && !inSetup()) {
      fallback ??= b;
      if (!commandLike(b.text)) {
        paragraph = b;
        break;
      }
    }
  }
  paragraph ??= fallback;
  return { title, description: paragraph ? clip(paragraph.text, MAX_DESCRIPTION) : null };
}

/** The first heading that is neither a section's name nor inside a section so named ("Installation" › "From source"); -1 when none is. */
function titleHeading(blocks: readonly Block[]): number {
  const open: { level: number; section: boolean }[] = [];
  for (let i = 0; i < blocks.length; i++) {
    const b = blocks[i]!;
    if (b.kind !== "heading" || b.text === "") continue;
    const level = b.level ?? 1;
    while (open.length && open.at(-1)!.level >= level) open.pop();
    const section = SECTION_NAME.test(sectionWords(b.text));
    if (!section && !open.some((h) => h.section)) return i;
    open.push({ level, section });
  }
  return -1;
}

const SETUP_HEADING =
  /\b(install(ation|ing)?|setup|set up|requirements|prerequisites|dependencies|usage|quick ?start|getting started|build(ing)?|running|development|contributing|license|citation|table of contents|contents|badges|changelog|news|updates)\b/i;

/** A heading that only names a section of the README, never the project. */
const SECTION_NAME = new RegExp(
  `^(${[
    "install(ation|ing)?",
    "setup",
    "set ?up",
    "requirements",
    "prerequisites",
    "dependencies",
    "usage",
    "quick ?start",
    "getting started",
    "build(ing)?",
    "running",
    "development",
    "contributing",
    "licen[cs]e",
    "citation",
    "cite",
    "(table of )?contents",
    "toc",
    "badges",
    "overview",
    "introduction",
    "intro",
    "about",
    "features",
    "news",
    "updates",
    "changelog",
    "abstract",
    "highlights",
    "results",
    "documentation",
    "docs",
    "faq",
    "acknowledg(e)?ments?",
    "contact",
    "authors?",
    "motivation",
    "background",
    "todo",
    "roadmap",
    "what'?s new",
    "description",
    "summary",
  ].join("|")})( (and|&|/) .*)?$`,
);

/** A heading as words: no numbering ("1."), emoji or trailing colon. */
function sectionWords(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/^[^\p{L}]+|[^\p{L}]+$/gu, "")
    .replace(/\s+/g, " ");
}

/**
 * A heading as a title: a long one (a name, then a sentence about it) is cut
 * where the name ends (": ", " - ", " — ", " | "), else at a sentence's end,
 * never mid-word.
 */
export function titleOf(heading: string): string {
  if (heading.length <= MAX_TITLE) return heading;
  const name = /^(.{2,120}?)(?::\s| [-–—|] )/u.exec(heading);
  if (name) return name[1]!.trim();
  const sentence = /^(.{20,}?[.!?])\s/u.exec(heading.slice(0, MAX_TITLE));
  if (sentence) return sentence[1]!;
  return clip(heading, MAX_TITLE);
}

/** `pip install x`, `$ make`, "To install, run:": a command, or the line that leads to one. */
function commandLike(text: string): boolean {
  const t = text.trim();
  return (
    /^(\$ |> |pip3? |python3? |npm |npx |yarn |pnpm |git |docker |make |go |cargo |conda |brew |apt(-get)? |curl |wget |bash |sh |cd |export |uv )/i.test(t) ||
    /:$/.test(t) ||
    !/\s/.test(t)
  );
}

interface Block {
  kind: "heading" | "paragraph";
  /** A heading's level, 1 for the outermost. */
  level?: number;
  /** Plain text, markup removed, whitespace collapsed. */
  text: string;
}

const FENCE = /^ {0,3}(`{3,}|~{3,})/;
const ATX_OPEN = /^ {0,3}#{1,6}(?=[ \t]|$)/;
const SETEXT = /^ {0,3}(=+|-+)\s*$/;
const LIST_ITEM = /^\s*([-*+]|\d+[.)])\s+/;
const THEMATIC_BREAK = /^ {0,3}([-*_])( *\1){2,} *$/;
const HTML_HEADING = /^\s*<h[12]\b/i;

export function markdownBlocks(source: string): Block[] {
  const text = withoutHtmlComments(source.replace(/\r\n?/g, "\n").replace(/^---\n[\s\S]*?\n---\n/, ""));
  const lines = text.split("\n");
  const blocks: Block[] = [];
  let para: string[] = [];
  const flush = () => {
    if (para.length) blocks.push(markdownParagraph(para));
    para = [];
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const fence = FENCE.exec(line);
    if (fence) {
      flush();
      const marker = fence[1]!;
      while (i + 1 < lines.length && !lines[i + 1]!.trimStart().startsWith(marker)) i++;
      i++;
      continue;
    }
    if (line.trim() === "") {
      flush();
      continue;
    }
    const atx = ATX_OPEN.exec(line);
    if (atx) {
      flush();
      blocks.push({ kind: "heading", level: atx[0].trim().length, text: inlineMarkdown(atxContent(line.slice(atx[0].length))) });
      continue;
    }
    if (SETEXT.test(line) && para.length && !LIST_ITEM.test(para[0]!)) {
      blocks.push({ kind: "heading", level: line.trim().startsWith("=") ? 1 : 2, text: inlineMarkdown(para.join(" ")) });
      para = [];
      continue;
    }
    if (HTML_HEADING.test(line)) {
      flush();
      const level = /<h([12])/i.exec(line)![1];
      const parts = [line];
      while (!new RegExp(`</h${level}>`, "i").test(parts.at(-1)!) && i + 1 < lines.length && lines[i + 1]!.trim() !== "") parts.push(lines[++i]!);
      blocks.push({ kind: "heading", level: Number(level), text: inlineMarkdown(parts.join(" ")) });
      continue;
    }
    if (para.length === 0 && THEMATIC_BREAK.test(line)) continue;
    // Indented code, not a lazy continuation of a paragraph.
    if (para.length === 0 && /^( {4}|\t)/.test(line)) continue;
    para.push(line);
  }
  flush();
  return blocks;
}

/** A heading's text without its optional closing run of `#` (which needs a space before it). */
function atxContent(rest: string): string {
  const text = rest.trim();
  let end = text.length;
  while (end > 0 && text[end - 1] === "#") end--;
  if (end === text.length) return text;
  if (end === 0) return "";
  return text[end - 1] === " " || text[end - 1] === "\t" ? text.slice(0, end).trimEnd() : text;
}

/** Drops `<!-- ... -->` (an unclosed one runs to the end), in one pass. */
function withoutHtmlComments(s: string): string {
  let out = "";
  let at = 0;
  for (;;) {
    const open = s.indexOf("<!--", at);
    if (open < 0) return out + s.slice(at);
    out += s.slice(at, open);
    const close = s.indexOf("-->", open + 4);
    if (close < 0) return out;
    at = close + 3;
  }
}

function markdownParagraph(lines: string[]): Block {
  const first = lines[0]!;
  // Lists, tables and link definitions are not the prose that says what a project is.
  if (LIST_ITEM.test(first) || /^\s*\|/.test(first) || /^\s*\[[^\]]+\]:\s*\S/.test(first)) return { kind: "paragraph", text: "" };
  const text = lines
    .map((l) => l.replace(/^\s*>\s?/, ""))
    .map(inlineMarkdown)
    .filter((l) => l !== "")
    .join(" ");
  return { kind: "paragraph", text: collapse(text) };
}

// Every repetition below is bounded, so no line costs more than linear time
// whatever its content (a README is someone else's input).
export function inlineMarkdown(s: string): string {
  return collapse(
    decodeEntities(
      s
        .slice(0, MAX_BLOCK_CHARS)
        .replace(/!\[[^\]]{0,500}\]\([^)]{0,2000}\)/g, "")
        .replace(/!\[[^\]]{0,500}\]\[[^\]]{0,500}\]/g, "")
        .replace(/\[([^\]]{0,500})\]\([^)]{0,2000}\)/g, "$1")
        .replace(/\[([^\]]{0,500})\]\[[^\]]{0,500}\]/g, "$1")
        .replace(/<(https?:\/\/[^>\s]{1,2000})>/g, "$1")
        .replace(/<\/?[A-Za-z][^>]{0,2000}>/g, " ")
        .replace(/(^|[\s(])(\*\*|__)(?=\S)(.{0,500}?\S)\2(?=[\s).,;:!?]|$)/g, "$1$3")
        .replace(/(^|[\s(])[*_](?=\S)([^*_]{0,500}?\S)[*_](?=[\s).,;:!?]|$)/g, "$1$2")
        .replace(/`{1,3}([^`]{0,500})`{1,3}/g, "$1")
        .replace(/\\([\\`*_{}[\]()#+\-.!|])/g, "$1"),
    ),
  );
}

const RST_ADORNMENT = /^([=\-`:'"~^_*+#<>.])\1{2,}\s*$/;

export function rstBlocks(source: string): Block[] {
  const lines = source.replace(/\r\n?/g, "\n").split("\n");
  const blocks: Block[] = [];
  // reStructuredText's levels are the adornment styles in the order they first appear.
  const styles: string[] = [];
  const levelOf = (style: string) => (styles.includes(style) ? styles : (styles.push(style), styles)).indexOf(style) + 1;
  let para: string[] = [];
  const flush = () => {
    if (para.length) {
      const first = para[0]!;
      const prose = !LIST_ITEM.test(first) && !/^:[^:\s][^:]*:/.test(first) && !/^\+[-=+]+\+?\s*$/.test(first);
      blocks.push({ kind: "paragraph", text: prose ? collapse(para.map(inlineRst).join(" ")) : "" });
    }
    para = [];
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.trim() === "") {
      flush();
      continue;
    }
    // Directives (`.. image::`, `.. |badge| image::`), comments and their indented bodies.
    if (/^\.\.(\s|$)/.test(line)) {
      flush();
      while (i + 1 < lines.length && (lines[i + 1]!.trim() === "" || /^\s/.test(lines[i + 1]!))) i++;
      continue;
    }
    if (RST_ADORNMENT.test(line.trim()) && line.trim().length >= 3) {
      const next = lines[i + 1];
      const after = lines[i + 2];
      // Over- and underlined title.
      if (para.length === 0 && next !== undefined && next.trim() !== "" && after !== undefined && after.trim() === line.trim()) {
        blocks.push({ kind: "heading", level: levelOf(`over${line.trim()[0]}`), text: collapse(inlineRst(next.trim())) });
        i += 2;
        continue;
      }
      if (para.length === 1) {
        blocks.push({ kind: "heading", level: levelOf(line.trim()[0]!), text: collapse(inlineRst(para[0]!.trim())) });
        para = [];
        continue;
      }
      flush(); // a transition line
      continue;
    }
    // An indented block after a paragraph is a quote or literal block, not a new paragraph.
    if (para.length === 0 && /^\s/.test(line)) {
      while (i + 1 < lines.length && (lines[i + 1]!.trim() === "" || /^\s/.test(lines[i + 1]!))) i++;
      continue;
    }
    para.push(line);
  }
  flush();
  return blocks;
}

function inlineRst(s: string): string {
  return decodeEntities(
    s
      .slice(0, MAX_BLOCK_CHARS)
      .replace(/`([^`<]{0,500}?)\s{0,20}<[^>]{0,2000}>`__?/g, "$1")
      .replace(/:[A-Za-z:+-]{1,50}:`([^`]{0,500})`/g, "$1")
      .replace(/``([^`]{0,500})``/g, "$1")
      .replace(/`([^`]{0,500})`_{0,2}/g, "$1")
      .replace(/\|[^|\s][^|]{0,200}\|_{0,2}/g, "")
      .replace(/\*\*([^*]{1,500})\*\*/g, "$1")
      .replace(/\*([^*\s][^*]{0,500})\*/g, "$1")
      .replace(/::$/, ":"),
  );
}

// The named entities READMEs use; others stay as written.
const ENTITIES: Record<string, string> = {
  nbsp: " ",
  ensp: " ",
  emsp: " ",
  thinsp: " ",
  amp: "&",
  lt: "<",
  gt: ">",
  quot: '"',
  apos: "'",
  mdash: "—",
  ndash: "–",
  hellip: "…",
  lsquo: "‘",
  rsquo: "’",
  ldquo: "“",
  rdquo: "”",
  laquo: "«",
  raquo: "»",
  times: "×",
  middot: "·",
  bull: "•",
  copy: "©",
  reg: "®",
  trade: "™",
  deg: "°",
  plusmn: "±",
  rarr: "→",
  larr: "←",
  harr: "↔",
  rArr: "⇒",
  le: "≤",
  ge: "≥",
  ne: "≠",
  asymp: "≈",
  micro: "µ",
  para: "¶",
  sect: "§",
  eacute: "é",
  egrave: "è",
  uuml: "ü",
  ouml: "ö",
  auml: "ä",
  szlig: "ß",
  ccedil: "ç",
};

/** HTML character references: the named ones above, and every numeric one (`&#8212;`, `&#x27;`) that names a character. */
export function decodeEntities(s: string): string {
  return s.replace(/&(#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z]{2,8});/g, (whole, e: string) => {
    if (e.startsWith("#")) {
      const code = e[1] === "x" || e[1] === "X" ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10);
      const ok = code > 0 && code <= 0x10ffff && !(code >= 0xd800 && code <= 0xdfff);
      return ok ? (code === 0xa0 ? " " : String.fromCodePoint(code)) : whole;
    }
    return ENTITIES[e] ?? whole;
  });
}

function collapse(s: string): string {
  return s.replace(/\s+/g, " ").trim();
}

/** Cuts at a sentence end (or failing that a word) before max characters. */
export function clip(s: string, max: number): string {
  if (s.length <= max) return s;
  const head = s.slice(0, max - 1);
  const sentence = Math.max(head.lastIndexOf(". "), head.lastIndexOf("! "), head.lastIndexOf("? "), head.lastIndexOf("。"));
  // A whole first sentence, however short, reads better than half of the second.
  if (sentence >= Math.min(max / 2, 20)) return head.slice(0, sentence + 1);
  const space = head.lastIndexOf(" ");
  return `${(space >= max / 2 ? head.slice(0, space) : head).trimEnd()}…`;
}
