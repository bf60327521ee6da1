import { describe, expect, it } from "vitest";
import { linkTarget, parseInline, parseMarkdown, repoPath } from "./markdown.ts";

describe("README markdown", () => {
  it("parses headings, paragraphs, lists, quotes, fenced code and rules", () => {
    const blocks = parseMarkdown("# Title\n\nOne\nline.\n\n- a\n- b\n  more\n\n1. x\n\n> said\n\n```sh\nrm -rf <b>\n```\n---\n");
    expect(blocks.map((b) => b.t)).toEqual(["h", "p", "ul", "ol", "quote", "code", "hr"]);
    expect(blocks[1]).toEqual({ t: "p", c: [{ t: "text", text: "One line." }] });
    expect(blocks[2]).toMatchObject({ items: [[{ text: "a" }], [{ text: "b" }, { text: " " }, { text: "more" }]] });
    // Code (and HTML anywhere) stays text.
    expect(blocks[5]).toEqual({ t: "code", text: "rm -rf <b>" });
  });

  it("parses inline code, emphasis and links; an image is a link, never loaded", () => {
    expect(parseInline("run `make` **now** or *later*, see [docs](docs/a.md) ![logo](https://x.example/l.png)")).toEqual([
      { t: "text", text: "run " },
      { t: "code", text: "make" },
      { t: "text", text: " " },
      { t: "strong", c: [{ t: "text", text: "now" }] },
      { t: "text", text: " or " },
      { t: "em", c: [{ t: "text", text: "later" }] },
      { t: "text", text: ", see " },
      { t: "link", href: "docs/a.md", c: [{ t: "text", text: "docs" }] },
      { t: "text", text: " " },
      { t: "link", href: "https://x.example/l.png", c: [{ t: "text", text: "image: logo" }] },
    ]);
    expect(parseInline("snake_case_name stays")).toEqual([{ t: "text", text: "snake_case_name stays" }]);
  });

  it("links only http(s), mailto and paths in the repository", () => {
    const rel = (p: string) => `#/repo?path=${p}`;
    expect(linkTarget("https://example.org/a", rel)).toBe("https://example.org/a");
    expect(linkTarget("javascript:alert(1)", rel)).toBeNull();
    expect(linkTarget("JaVaScRiPt:alert(1)", rel)).toBeNull();
    expect(linkTarget("data:text/html,x", rel)).toBeNull();
    expect(linkTarget("//evil.example/x", rel)).toBeNull();
    expect(linkTarget("docs/guide.md", rel)).toBe("#/repo?path=docs/guide.md");
    expect(repoPath("../README.md", "docs")).toBe("README.md");
    expect(repoPath("./src/main.py#L3", "")).toBe("src/main.py");
  });
});
