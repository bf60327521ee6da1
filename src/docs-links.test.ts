import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

// Every relative link in the README, docs/ and the chart's README must lead
// somewhere: the file or folder exists and, for a `#anchor` into Markdown, a
// heading of that slug (as GitHub makes them) is there. External links
// (http, https, mailto) are not fetched: tests stay on this machine.

const ROOT = path.resolve(import.meta.dirname, "..");

function markdownUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return markdownUnder(p);
    return e.name.endsWith(".md") ? [p] : [];
  });
}

/** The text outside fenced code blocks and inline code spans: links and headings there are not real. */
function prose(markdown: string): string {
  return markdown.replace(/^( *)(```|~~~)[\s\S]*?^\1\2 *$/gm, "").replace(/`[^`\n]*`/g, (span) => (span.length > 2 ? "" : span));
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
export function slug(heading: string): string {
  return heading
    .replace(/`/g, "")
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/ /g, "-");
}

/** Every anchor a Markdown page offers (repeated headings get -1, -2, ...). */
export function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  const noFences = markdown.replace(/^( *)(```|~~~)[\s\S]*?^\1\2 *$/gm, "");
  for (const [, text] of noFences.matchAll(/^#{1,6} +(.+?) *#* *$/gm)) {
    const base = slug(text!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** The relative link targets of a page: inline links and images, and reference definitions. */
export function linkTargets(markdown: string): string[] {
  const text = prose(markdown);
  const inline = [...text.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]!);
  const defs = [...text.matchAll(/^ {0,3}\[[^\]]+\]:\s+<?(\S+?)>?(?:\s+"[^"]*")?$/gm)].map((m) => m[1]!);
  return [...inline, ...defs].filter((t) => !/^[a-z][a-z0-9+.-]*:/i.test(t));
}

/** The links of `file` that lead nowhere, as "file -> target: why". */
export function brokenLinks(file: string, markdown: string, read: (p: string) => string | null, isDirectory: (p: string) => boolean): string[] {
  return linkTargets(markdown).flatMap((target) => {
    const [rawPath = "", anchor] = target.split("#", 2);
    const where = rawPath === "" ? file : path.resolve(path.dirname(file), decodeURIComponent(rawPath));
    const name = `${path.relative(ROOT, file)} -> ${target}`;
    if (rawPath !== "" && !isDirectory(where) && read(where) === null) return [`${name}: no such file`];
    if (anchor === undefined || !where.endsWith(".md")) return [];
    const page = read(where) ?? "";
    return anchors(page).has(anchor) ? [] : [`${name}: no heading with that anchor`];
  });
}

const read = (p: string): string | null => (existsSync(p) && statSync(p).isFile() ? readFileSync(p, "utf8") : null);
const isDirectory = (p: string) => existsSync(p) && statSync(p).isDirectory();

describe("documentation links", () => {
  const pages = [path.join(ROOT, "README.md"), path.join(ROOT, "charts/codeplane/README.md"), ...markdownUnder(path.join(ROOT, "docs"))];

  it("checks the README, the chart's README and every page under docs/", () => {
    expect(pages.length).toBeGreaterThan(20);
  });

  it("lead to files, folders and headings that exist", () => {
    expect(pages.flatMap((p) => brokenLinks(p, readFileSync(p, "utf8"), read, isDirectory))).toEqual([]);
  });
});

describe("slug", () => {
  it.each([
    ["Install with Helm", "install-with-helm"],
    ["What `helm uninstall` leaves", "what-helm-uninstall-leaves"],
    ["The cookie on `/v1` and CSRF", "the-cookie-on-v1-and-csrf"],
    ["The sign-in session (for the dashboard)", "the-sign-in-session-for-the-dashboard"],
    ["Environment variables, lists and rate limits", "environment-variables-lists-and-rate-limits"],
    ["0001. `codeplane serve` runs", "0001-codeplane-serve-runs"],
    ["snake_case stays", "snake_case-stays"],
  ])("%s -> %s", (heading, want) => {
    expect(slug(heading)).toBe(want);
  });
});

describe("brokenLinks", () => {
  const pagesOf: Record<string, string> = {
    [path.join(ROOT, "docs/a.md")]: "# A\n\n## Same\n\n## Same\n\n```sh\n# not a heading\n```\n",
    [path.join(ROOT, "docs/b.md")]: "# B\n",
  };
  const fakeRead = (p: string) => pagesOf[p] ?? null;
  const fakeDir = (p: string) => p === path.join(ROOT, "docs");
  it.each([
    ["a page that exists", "[b](b.md)", []],
    ["a heading that exists, and its repeat", "[x](a.md#same) [y](a.md#same-1)", []],
    ["an anchor on the same page", "[x](#same)", []],
    ["a folder", "[d](../docs)", []],
    ["external and mail links, not fetched", "[x](https://example.com/nowhere) [m](mailto:a@b.c)", []],
    ["a link inside code, not a link", "`[x](gone.md)`\n\n```md\n[y](gone.md)\n```", []],
    ["a missing page", "[x](gone.md)", ["docs/a.md -> gone.md: no such file"]],
    ["a missing heading", "[x](b.md#nope)", ["docs/a.md -> b.md#nope: no heading with that anchor"]],
    ["a heading only inside code", "[x](a.md#not-a-heading)", ["docs/a.md -> a.md#not-a-heading: no heading with that anchor"]],
    ["a reference definition", "[x]: gone.md", ["docs/a.md -> gone.md: no such file"]],
  ])("%s", (_what, markdown, want) => {
    expect(brokenLinks(path.join(ROOT, "docs/a.md"), markdown, fakeRead, fakeDir)).toEqual(want);
  });
});
