import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";

// mkdocs.yml's nav is the site's table of contents: it must list every page
// under docs/ once, and nothing that is not there. mkdocs itself is not
// needed (nor installed) for this.

const ROOT = path.resolve(import.meta.dirname, "..");

/** Every page a nav names: the strings at its leaves, whether `Title: page.md` or a bare `page.md`. */
export function navPages(nav: unknown): string[] {
  if (typeof nav === "string") return [nav];
  if (Array.isArray(nav)) return nav.flatMap(navPages);
  if (nav && typeof nav === "object") return Object.values(nav).flatMap(navPages);
  return [];
}

function pagesUnder(dir: string, base = dir): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return pagesUnder(p, base);
    return e.name.endsWith(".md") ? [path.relative(base, p)] : [];
  });
}

describe("mkdocs.yml", () => {
  const site = parse(readFileSync(path.join(ROOT, "mkdocs.yml"), "utf8")) as { docs_dir?: string; nav?: unknown };
  const docsDir = path.join(ROOT, site.docs_dir ?? "docs");
  const listed = navPages(site.nav).filter((p) => !/^[a-z]+:\/\//.test(p));

  it("lists every page under docs/ in its nav", () => {
    expect(
      pagesUnder(docsDir)
        .filter((p) => !listed.includes(p))
        .sort(),
    ).toEqual([]);
  });

  it("lists only pages that exist, each once", () => {
    const pages = pagesUnder(docsDir);
    expect(listed.filter((p) => !pages.includes(p))).toEqual([]);
    expect(listed.filter((p, i) => listed.indexOf(p) !== i)).toEqual([]);
  });
});

describe("navPages", () => {
  it.each([
    ["a bare page", ["index.md"], ["index.md"]],
    ["titled pages in sections", [{ Home: "index.md" }, { Users: [{ Runs: "users/runs.md" }, "users/sse.md"] }], ["index.md", "users/runs.md", "users/sse.md"]],
    ["no nav", undefined, []],
  ])("%s", (_what, nav, want) => {
    expect(navPages(nav)).toEqual(want);
  });
});
