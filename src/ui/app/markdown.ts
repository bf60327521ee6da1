// A repository's README as the repository page shows it: a small subset of
// Markdown (headings, paragraphs, lists, block quotes, fenced code, rules,
// inline code, emphasis, links) parsed into blocks here and drawn with DOM
// nodes (text nodes only: HTML in the README is shown as text, never parsed).
// Nothing outside the service is loaded: an image becomes a link to where it
// is, and only http(s), mailto and relative links are links at all (a
// relative one opens the file in the repository view).

import { h, type Child } from "./dom.ts";

export type Inline = { t: "text"; text: string } | { t: "code"; text: string } | { t: "strong" | "em"; c: Inline[] } | { t: "link"; href: string; c: Inline[] };

export type Block =
  | { t: "h"; level: number; c: Inline[] }
  | { t: "p"; c: Inline[] }
  | { t: "ul" | "ol"; items: Inline[][] }
  | { t: "quote"; c: Inline[] }
  | { t: "code"; text: string }
  | { t: "hr" };

const INLINE = /`([^`]+)`|(!?)\[([^\]]*)\]\(([^)\s]+)(?:\s+"[^"]*")?\)|\*\*(.+?)\*\*|__(.+?)__|\*([^*\s][^*]*?)\*|\b_([^_\s][^_]*?)_\b/g;

/** The inline parts of a run of text. */
export function parseInline(text: string): Inline[] {
  const out: Inline[] = [];
  let last = 0;
  for (const m of text.matchAll(INLINE)) {
    if (m.index > last) out.push({ t: "text", text: text.slice(last, m.index) });
    last = m.index + m[0].length;
    if (m[1] !== undefined) out.push({ t: "code", text: m[1] });
    else if (m[4] !== undefined) {
      // An image is not loaded: a link to it, named by its alt text.
      const label = m[2] ? `image: ${m[3] || m[4]}` : m[3]!;
      out.push({ t: "link", href: m[4], c: m[2] ? [{ t: "text", text: label }] : parseInline(label) });
    } else if (m[5] !== undefined || m[6] !== undefined) out.push({ t: "strong", c: parseInline(m[5] ?? m[6]!) });
    else out.push({ t: "em", c: parseInline(m[7] ?? m[8]!) });
  }
  if (last < text.length) out.push({ t: "text", text: text.slice(last) });
  return out;
}

const LIST = /^\s{0,3}([-*+]|\d{1,9}[.)])\s+(.*)$/;

/** The blocks of a Markdown text. */
export function parseMarkdown(src: string): Block[] {
  const lines = src.replace(/\r\n?/g, "\n").split("\n");
  const out: Block[] = [];
  let para: string[] = [];
  const flush = () => {
    if (para.length) out.push({ t: "p", c: parseInline(para.join(" ")) });
    para = [];
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const fence = /^\s{0,3}(```|~~~)/.exec(line);
    if (fence) {
      flush();
      const body: string[] = [];
      for (i++; i < lines.length && !lines[i]!.trimStart().startsWith(fence[1]!); i++) body.push(lines[i]!);
      out.push({ t: "code", text: body.join("\n") });
      continue;
    }
    const heading = /^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) {
      flush();
      out.push({ t: "h", level: heading[1]!.length, c: parseInline(heading[2]!) });
      continue;
    }
    if (/^\s{0,3}([-*_])(\s*\1){2,}\s*$/.test(line)) {
      flush();
      out.push({ t: "hr" });
      continue;
    }
    const item = LIST.exec(line);
    if (item) {
      flush();
      const kind = /\d/.test(item[1]!) ? "ol" : "ul";
      const items: Inline[][] = [];
      for (; i < lines.length; i++) {
        const m = LIST.exec(lines[i]!);
        if (m) items.push(parseInline(m[2]!));
        else if (/^\s{2,}\S/.test(lines[i]!) && items.length) items[items.length - 1]!.push({ t: "text", text: " " }, ...parseInline(lines[i]!.trim()));
        else break;
      }
      i--;
      out.push({ t: kind, items });
      continue;
    }
    if (/^\s{0,3}>/.test(line)) {
      flush();
      const quoted: string[] = [];
      for (; i < lines.length && /^\s{0,3}>/.test(lines[i]!); i++) quoted.push(lines[i]!.replace(/^\s{0,3}>\s?/, ""));
      i--;
      out.push({ t: "quote", c: parseInline(quoted.join(" ")) });
      continue;
    }
    if (!line.trim()) flush();
    else para.push(line.trim());
  }
  flush();
  return out;
}

/** Where a link goes: http(s) and mailto as they are, a relative path through `relative`, anything else nowhere (null). */
export function linkTarget(href: string, relative: (path: string) => string): string | null {
  if (/^(https?:|mailto:)/i.test(href)) return href;
  if (/^[a-z][a-z0-9+.-]*:/i.test(href) || href.startsWith("//")) return null;
  if (href.startsWith("#")) return null;
  return relative(href);
}

/** A relative link's path in the repository, from the directory of the file it is in. */
export function repoPath(href: string, dir: string): string {
  const u = new URL(href, `http://repo/${dir ? `${dir}/` : ""}`);
  return decodeURIComponent(u.pathname.slice(1)).replace(/\/$/, "");
}

function inline(parts: Inline[], relative: (path: string) => string): Child[] {
  return parts.map((p) => {
    if (p.t === "text") return p.text;
    if (p.t === "code") return h("code", {}, p.text);
    if (p.t !== "link") return h(p.t, {}, ...inline(p.c, relative));
    const to = linkTarget(p.href, relative);
    const label = inline(p.c, relative);
    return to === null ? h("span", {}, ...label) : h("a", { href: to, ...(/^https?:/i.test(to) && { rel: "noopener noreferrer nofollow" }) }, ...label);
  });
}

/** The README's blocks as DOM, its headings below the section's own (a README's # is an h3). */
export function renderMarkdown(src: string, relative: (path: string) => string): HTMLElement[] {
  return parseMarkdown(src).map((b) => {
    switch (b.t) {
      case "h":
        return h(`h${Math.min(6, b.level + 2)}` as "h3", {}, ...inline(b.c, relative));
      case "p":
        return h("p", {}, ...inline(b.c, relative));
      case "ul":
      case "ol":
        return h(b.t, {}, ...b.items.map((it) => h("li", {}, ...inline(it, relative))));
      case "quote":
        return h("blockquote", {}, ...inline(b.c, relative));
      case "code":
        return h("pre", {}, h("code", {}, b.text));
      case "hr":
        return h("hr", {});
    }
  });
}
