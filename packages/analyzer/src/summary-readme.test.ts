import { describe, expect, it } from "vitest";
import type { AnalyzerContext } from "./detector.ts";
import type { RepoFile } from "./files.ts";
import type { Syntax } from "./syntax.ts";
import { clip, decodeEntities, findReadme, inlineMarkdown, readmeFacts } from "./summary-readme.ts";

const md = (text: string) => readmeFacts({ path: "README.md", text });
const rst = (text: string) => readmeFacts({ path: "README.rst", text });

describe("readmeFacts (Markdown)", () => {
  it.each<[string, string, { title: string | null; description: string | null }]>([
    [
      "ATX heading and first paragraph",
      "# Demo\n\nA tiny demo project\nthat trains a model.\n\nMore text.\n",
      { title: "Demo", description: "A tiny demo project that trains a model." },
    ],
    [
      "badges, images and HTML before the prose",
      '# My Project\n\n[![CI](https://ci/badge.svg)](https://ci) [![PyPI](https://img.shields.io/pypi/v/x)](https://pypi.org/x)\n\n<p align="center">\n  <img src="logo.png" width="200">\n</p>\n\n<!-- hidden\n\nnote -->\n\nMy Project **classifies** [images](https://example.com) with `torch`.\n',
      { title: "My Project", description: "My Project classifies images with torch." },
    ],
    ["setext heading", "Demo Tool\n=========\n\nDoes things.\n", { title: "Demo Tool", description: "Does things." }],
    ["closing hashes and a logo-only heading", "# ![logo](logo.png)\n\n## Real Title ##\n\nText.\n", { title: "Real Title", description: "Text." }],
    [
      "HTML heading",
      '<h1 align="center">\n  Fancy <b>Name</b>\n</h1>\n\n> A quote that says what it is.\n',
      { title: "Fancy Name", description: "A quote that says what it is." },
    ],
    [
      "lists, tables, code and rules are not prose",
      "# T\n\n- item\n- item\n\n| a | b |\n|---|---|\n\n```\ncode here\n```\n\n    indented code\n\n---\n\nFinally prose.\n",
      { title: "T", description: "Finally prose." },
    ],
    ["front matter", "---\nlayout: page\n---\n# Site\n\nHello.\n", { title: "Site", description: "Hello." }],
    ["no heading: the first paragraph", "Just some words about it.\n\nMore.\n", { title: null, description: "Just some words about it." }],
    ["nothing at all", "", { title: null, description: null }],
    ["only badges", "[![a](b)](c)\n", { title: null, description: null }],
    [
      "snake_case and escapes survive",
      "# x\n\nUse my_module_name and \\_\\_init\\_\\_ \\*literally\\*.\n",
      { title: "x", description: "Use my_module_name and __init__ *literally*." },
    ],
  ])("%s", (_, text, expected) => expect(md(text)).toEqual(expected));

  it("clips a long description at a sentence", () => {
    const long = `# T\n\n${"This sentence is filler text. ".repeat(30)}\n`;
    const { description } = md(long);
    expect(description!.length).toBeLessThanOrEqual(500);
    expect(description!.endsWith("filler text.")).toBe(true);
  });
});

describe("readmeFacts on hostile input", () => {
  it.each([
    ["a heading with a huge run of spaces", `# a${" ".repeat(300_000)}b`],
    ["unclosed images", "x ![".repeat(100_000)],
    ["unclosed comments", "<!--".repeat(100_000)],
    ["unclosed emphasis", `${"**a ".repeat(50_000)}\n`],
    ["brackets", "[".repeat(300_000)],
  ])("%s", (_, text) => {
    const started = Date.now();
    readmeFacts({ path: "README.md", text });
    readmeFacts({ path: "README.rst", text });
    expect(Date.now() - started).toBeLessThan(1000);
  });
});

describe("readmeFacts (reStructuredText)", () => {
  it.each<[string, string, { title: string | null; description: string | null }]>([
    [
      "over- and underlined title, badges as substitutions and directives",
      "=========\nMy Lib\n=========\n\n.. image:: https://ci/badge.svg\n   :target: https://ci\n\n|build| |docs|\n\n.. |build| image:: x.svg\n\n:Author: Someone\n\nMy Lib parses ``YAML`` with `style <https://example.com>`_ and :func:`load`.\n",
      { title: "My Lib", description: "My Lib parses YAML with style and load." },
    ],
    ["underlined title", "Tool\n----\n\nDoes it.\n", { title: "Tool", description: "Does it." }],
    // "Example:" only introduces the literal block: the description is the prose after it.
    ["literal blocks are skipped", "Tool\n====\n\nExample::\n\n    code\n\nText after.\n", { title: "Tool", description: "Text after." }],
  ])("%s", (_, text, expected) => expect(rst(text)).toEqual(expected));
});

describe("inlineMarkdown", () => {
  it.each([
    ["[text](http://x) and [ref][1]", "text and ref"],
    ["<https://example.com>", "https://example.com"],
    ["*emphasis* and **strong** and _under_", "emphasis and strong and under"],
    ["a &amp; b&nbsp;c", "a & b c"],
  ])("%j", (input, expected) => expect(inlineMarkdown(input)).toBe(expected));
});

describe("clip", () => {
  it("keeps short text and cuts long text at a word", () => {
    expect(clip("short", 10)).toBe("short");
    expect(clip("one two three four five", 12)).toBe("one two…");
  });
});

describe("findReadme", () => {
  const ctx = (files: Record<string, string | null>): AnalyzerContext => {
    const list: RepoFile[] = Object.keys(files)
      .sort()
      .map((path) => ({ path, size: 1, executable: false }));
    return {
      files: list,
      byPath: new Map(list.map((f) => [f.path, f])),
      readText: (p) => files[p] ?? null,
      syntax: null as unknown as Syntax,
      outOfTime: () => false,
    };
  };
  it("prefers Markdown at the root and skips unreadable files", () => {
    expect(findReadme(ctx({ "README.rst": "r", "Readme.md": "m", "docs/README.md": "d" }))?.path).toBe("Readme.md");
    expect(findReadme(ctx({ "README.md": null, README: "plain" }))).toEqual({ path: "README", text: "plain" });
    expect(findReadme(ctx({ "docs/README.md": "d" }))).toBeNull();
  });
});

describe("readmeFacts: the opening description, not the setup", () => {
  it.each([
    [
      "installation before the description",
      "# tool\n\n## Installation\n\nRun this first:\n\n    pip install tool\n\n## About\n\nTool turns logs into charts.\n",
      "Tool turns logs into charts.",
    ],
    ["a command line as the first paragraph", "# tool\n\n$ npm install -g tool\n\nTool turns logs into charts.\n", "Tool turns logs into charts."],
    ["a usage section only: no description", "# tool\n\n## Usage\n\nCall it with a file.\n", null],
    [
      "nor from a sub-section of Installation",
      "# tool\n\n## Installation\n\n### From source\n\nYou need a compiler.\n\n## About\n\nTool draws charts.\n",
      "Tool draws charts.",
    ],
    ["a command-like paragraph when it is all there is", "# tool\n\nRun it:\n", "Run it:"],
    ["an opening paragraph wins", "# tool\n\nTool turns logs into charts.\n\n## Installation\n\nUse pip.\n", "Tool turns logs into charts."],
  ])("%s", (_name, text, description) => expect(md(text).description).toBe(description));
});

describe("readmeFacts: the title is the project's name, not a section's", () => {
  it.each<[string, string, string | null]>([
    [
      "a logo, then Installation, then the name",
      '<p align="center"><img src="logo.png"></p>\n\n## Installation\n\npip install x\n\n## Tiler: fast tiles\n\nText.\n',
      "Tiler: fast tiles",
    ],
    ["a sub-section of a setup section is not the name either", "## Installation\n\n### From source\n\nText.\n\n## Tiler\n\nText.\n", "Tiler"],
    ["numbered and decorated section names", "## 1. Getting Started 🚀\n\n## 📦 Installation\n\n## Table of Contents:\n\n# Tiler\n", "Tiler"],
    ["a section name inside a longer title is a title", "# Installation of Gentoo made easy\n", "Installation of Gentoo made easy"],
    ["only sections: no title", "## Usage\n\nText.\n\n## License\n\nMIT.\n", null],
    ["a heading that runs on is cut where the name ends", `# Quill: ${"a tiny editor that does many things ".repeat(8)}\n`, "Quill"],
    ["or at its first sentence", `# The tiny editor for notes. ${"It does many things and more. ".repeat(8)}\n`, "The tiny editor for notes."],
    ["a short heading with a colon stays whole", "# Quill: a tiny editor\n", "Quill: a tiny editor"],
  ])("%s", (_name, text, title) => expect(md(text).title).toBe(title));
});

describe("decodeEntities", () => {
  it.each<[string, string]>([
    ["A &mdash; B", "A — B"],
    ["a&nbsp;&times;&nbsp;b", "a × b"],
    ["x &ndash; y &hellip;", "x – y …"],
    ["&#8212;&#x27;&#X2014;", "—'—"],
    ["&lt;b&gt; &amp; &quot;q&quot;", '<b> & "q"'],
    ["&unknown; &#0; &#xD800; &#99999999;", "&unknown; &#0; &#xD800; &#99999999;"],
    ["AT&T and R&D; fine", "AT&T and R&D; fine"],
  ])("%s", (text, want) => expect(decodeEntities(text)).toBe(want));
});

describe("clip", () => {
  it.each<[string, number, string]>([
    ["Short.", 100, "Short."],
    [`First sentence here is whole. ${"word ".repeat(40)}`, 100, "First sentence here is whole."],
    [`${"word ".repeat(40)}`, 50, `${"word ".repeat(9).trim()}…`],
  ])("%s", (text, max, want) => expect(clip(text, max)).toBe(want));
});
