// A small syntax highlighter: comments, strings, numbers and keywords of the
// common languages, by file extension. Line numbers beside. No regex runs on
// huge files (beyond 200 KiB the text is shown plain).

import { h } from "./dom.ts";

const KEYWORDS = new Set(
  (
    "and as assert async await break case catch class const continue def del elif else enum except export extends false finally fn for from func " +
    "function go if impl import in interface is lambda let match mod new nil none not null or package pass pub raise return self static struct " +
    "super switch this throw true try type typeof use var while with yield None True False"
  ).split(" "),
);

const HASH_COMMENT = new Set(["py", "sh", "bash", "rb", "yaml", "yml", "toml", "r", "pl", "mk", "dockerfile", "makefile"]);
const CODE = new Set([
  "py",
  "js",
  "mjs",
  "cjs",
  "ts",
  "tsx",
  "jsx",
  "go",
  "rs",
  "java",
  "c",
  "h",
  "cc",
  "cpp",
  "hpp",
  "cs",
  "rb",
  "sh",
  "bash",
  "kt",
  "swift",
  "php",
  "scala",
  "yaml",
  "yml",
  "toml",
  "json",
  "r",
  "pl",
  "lua",
  "mk",
  "dockerfile",
  "makefile",
]);

export function highlight(text: string, path: string): HTMLElement {
  const name = path.split("/").at(-1)!.toLowerCase();
  const ext = name.includes(".") ? name.split(".").at(-1)! : name;
  const pre = h("pre", { class: "file", id: "file-content", tabindex: 0 });
  const lines = text.split("\n");
  if (lines.at(-1) === "") lines.pop();
  const code = CODE.has(ext) && text.length < 200 * 1024;
  const hash = HASH_COMMENT.has(ext);
  const token = hash
    ? /(#.*$)|("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')|\b(\d+(?:\.\d+)?)\b|\b([A-Za-z_]\w*)\b/g
    : /(\/\/.*$)|("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`(?:[^`\\]|\\.)*`)|\b(\d+(?:\.\d+)?)\b|\b([A-Za-z_]\w*)\b/g;
  const frag = document.createDocumentFragment();
  lines.forEach((line, i) => {
    frag.append(h("span", { class: "ln", "aria-hidden": "true" }, String(i + 1)));
    if (!code) frag.append(line);
    else {
      let last = 0;
      for (const m of line.matchAll(token)) {
        const cls = m[1] ? "tok-com" : m[2] ? "tok-str" : m[3] ? "tok-num" : m[4] && KEYWORDS.has(m[4]) ? "tok-kw" : null;
        if (!cls) continue;
        frag.append(line.slice(last, m.index), h("span", { class: cls }, m[0]));
        last = m.index + m[0].length;
      }
      frag.append(line.slice(last));
    }
    frag.append("\n");
  });
  pre.append(frag);
  return pre;
}
