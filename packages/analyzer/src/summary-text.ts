import { BUILD_FILES, NON_CODE, type LanguageStat } from "./summary-languages.ts";
import { clip } from "./summary-readme.ts";

// The summary's few plain sentences, in English or Japanese, written only
// from facts the analyzer established.

export interface SummaryFacts {
  language: "en" | "ja";
  /** The README's title, used as the project's name when it is short enough to read as one. */
  title: string | null;
  description: string | null;
  languages: readonly LanguageStat[];
  fileCount: number;
  /** No file has any content (at most placeholders such as .gitkeep). */
  empty: boolean;
  experimentCount: number;
  /** The most likely entry point's command line. */
  entryPoint: string | null;
  frameworks: readonly string[];
  license: string | null;
  truncated: boolean;
}

const MAX_NAME = 60;
const MAX_QUOTE = 300;
const MAX_FRAMEWORKS = 5;
const MAX_OTHER_LANGUAGES = 3;

export function summaryText(f: SummaryFacts): string {
  return f.language === "ja" ? japanese(f) : english(f);
}

/** 1234567 → "1,234,567", the same in every locale the process may run in. */
export function formatCount(n: number): string {
  return String(Math.trunc(n)).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

/** Languages the project is written in, the one it is "a ... project" in first. */
function codeLanguages(f: SummaryFacts): LanguageStat[] {
  const code = f.languages.filter((l) => !NON_CODE.has(l.name));
  const main = code.find((l) => !BUILD_FILES.has(l.name)) ?? code[0];
  return main ? [main, ...code.filter((l) => l !== main)] : [];
}

const ENGLISH_FILE_NOUNS: Record<string, [string, string]> = {
  Makefile: ["Makefile", "Makefiles"],
  Dockerfile: ["Dockerfile", "Dockerfiles"],
  "Jupyter Notebook": ["notebook", "notebooks"],
};

function englishFiles(language: string, n: number): string {
  const [one, many] = ENGLISH_FILE_NOUNS[language] ?? [`${language} file`, `${language} files`];
  return `${formatCount(n)} ${n === 1 ? one : many}`;
}

function projectName(f: SummaryFacts): string | null {
  return f.title && f.title.length <= MAX_NAME ? f.title : null;
}

function englishList(items: readonly string[]): string {
  if (items.length <= 1) return items.join("");
  return `${items.slice(0, -1).join(", ")} and ${items.at(-1)}`;
}

function english(f: SummaryFacts): string {
  if (f.empty) return "The repository is empty.";
  const sentences: string[] = [];
  const name = projectName(f) ?? "This repository";
  const [main, ...others] = codeLanguages(f);
  if (main) {
    const files = englishFiles(main.name, main.files);
    const lines = main.lines > 0 ? `, ${formatCount(main.lines)} ${main.lines === 1 ? "line" : "lines"}` : "";
    const also = others.length ? `; also ${englishList(others.slice(0, MAX_OTHER_LANGUAGES).map((l) => l.name))}` : "";
    sentences.push(`${name} is a ${main.name} project (${files}${lines}${also}).`);
  } else {
    const mostly = f.languages[0] ? `, mostly ${f.languages[0].name},` : "";
    sentences.push(
      `${name} holds ${formatCount(f.fileCount)} ${f.fileCount === 1 ? "file" : "files"}${mostly} and no source code in a language the analyzer recognises.`,
    );
  }
  if (f.description) {
    const quote = clip(f.description, MAX_QUOTE);
    sentences.push(`Its README says: "${quote}${/[.!?…]$/.test(quote) ? "" : "."}"`);
  }
  const atLeast = f.truncated ? "at least " : "";
  const cut = f.truncated ? " (the analysis stopped before the end)" : "";
  if (f.experimentCount === 0 || !f.entryPoint) sentences.push(`No runnable entry point was found${cut}.`);
  else if (f.experimentCount === 1) sentences.push(`It has ${atLeast}1 runnable experiment${cut}: \`${f.entryPoint}\`.`);
  else sentences.push(`It has ${atLeast}${formatCount(f.experimentCount)} runnable experiments${cut}; the most likely entry point is \`${f.entryPoint}\`.`);
  const shown = f.frameworks.slice(0, MAX_FRAMEWORKS);
  const more = f.frameworks.length - shown.length;
  const uses = shown.length ? `uses ${englishList(more > 0 ? [...shown, `${more} more`] : shown)}` : "";
  const licensed = f.license ? `is licensed under ${f.license}` : "";
  // A comma keeps "and is licensed" apart from the list's own "and".
  if (uses || licensed) sentences.push(`It ${[uses, licensed].filter(Boolean).join(shown.length > 1 ? ", and " : " and ")}.`);
  return sentences.join(" ");
}

// Japanese text puts a space between a Latin word or number and the kana or
// kanji next to it; names that end in Latin letters need one before a particle.
function beforeParticle(word: string): string {
  return /[\x21-\x7e]$/.test(word) ? `${word} ` : word;
}

function japanese(f: SummaryFacts): string {
  if (f.empty) return "リポジトリは空です。";
  const sentences: string[] = [];
  const name = projectName(f) ?? "このリポジトリ";
  const [main, ...others] = codeLanguages(f);
  if (main) {
    const lines = main.lines > 0 ? `、${formatCount(main.lines)} 行` : "";
    const also = others.length
      ? `。ほかに ${others
          .slice(0, MAX_OTHER_LANGUAGES)
          .map((l) => l.name)
          .join("、")} も含みます`
      : "";
    sentences.push(`${beforeParticle(name)}は ${main.name} のプロジェクトです（${main.name} ファイル ${formatCount(main.files)} 個${lines}${also}）。`);
  } else {
    const mostly = f.languages[0] ? `（主に ${f.languages[0].name}）` : "";
    sentences.push(
      `${beforeParticle(name)}にはファイルが ${formatCount(f.fileCount)} 個あります${mostly}が、解析できる言語のソースコードは見つかりませんでした。`,
    );
  }
  if (f.description) sentences.push(`README には「${clip(f.description, MAX_QUOTE)}」と書かれています。`);
  const cut = f.truncated ? "（解析は途中で打ち切られたため、ほかにもある可能性があります）" : "";
  if (f.experimentCount === 0 || !f.entryPoint) sentences.push(`実行できるエントリーポイントは見つかりませんでした${cut}。`);
  else if (f.experimentCount === 1) sentences.push(`実行可能なエクスペリメントは 1 件で${cut}、エントリーポイントは \`${f.entryPoint}\` です。`);
  else sentences.push(`実行可能なエクスペリメントが ${formatCount(f.experimentCount)} 件あり${cut}、最も有力なエントリーポイントは \`${f.entryPoint}\` です。`);
  const shown = f.frameworks.slice(0, MAX_FRAMEWORKS);
  const more = f.frameworks.length - shown.length;
  const uses = shown.length ? `${beforeParticle(`${shown.join("、")}${more > 0 ? ` ほか ${more} 件` : ""}`)}を使用して` : "";
  if (uses && f.license) sentences.push(`${uses}おり、ライセンスは ${f.license} です。`);
  else if (uses) sentences.push(`${uses}います。`);
  else if (f.license) sentences.push(`ライセンスは ${f.license} です。`);
  return sentences.join("");
}
