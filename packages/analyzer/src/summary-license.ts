import { parse as parseToml } from "smol-toml";
import type { AnalyzerContext } from "./detector.ts";

// The project's licence as an SPDX identifier: recognised from the licence
// file's wording (the phrases each licence text is built around), else taken
// from what the package manifest declares. Null rather than a guess.

// Tried in this order; COPYING.LESSER comes first because LGPL projects ship
// the GPL text as COPYING next to it.
const LICENSE_FILES = /^(copying\.lesser|(licen[cs]e|copying)(\.(md|txt|rst))?)$/i;
const FILE_ORDER = [
  "copying.lesser",
  "license",
  "license.md",
  "license.txt",
  "license.rst",
  "licence",
  "licence.md",
  "licence.txt",
  "licence.rst",
  "copying",
  "copying.md",
  "copying.txt",
  "copying.rst",
];

/** Lowercase words and numbers separated by single spaces, so wrapping and punctuation do not matter. */
function normalize(text: string): string {
  return ` ${text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, " ")
    .trim()} `;
}

export function licenseFromText(text: string): string | null {
  const t = normalize(text.slice(0, 200_000));
  if (t.includes(" this is free and unencumbered software released into the public domain ")) return "Unlicense";
  if (/ apache license (\S+ ){0,6}?version 2 0 /.test(t) || t.includes(" apache license 2 0 ")) return "Apache-2.0";
  if (/ mozilla public license (version|v) 2 0 /.test(t)) return "MPL-2.0";
  const gnu = gnuLicense(t);
  if (gnu) return gnu;
  if (t.includes(" redistribution and use in source and binary forms with or without modification are permitted provided that ")) {
    if (t.includes(" all advertising materials mentioning features or use of this software must display ")) return "BSD-4-Clause";
    if (t.includes(" neither the name of ") || t.includes(" may be used to endorse or promote products derived from this software ")) return "BSD-3-Clause";
    return "BSD-2-Clause";
  }
  if (t.includes(" permission is hereby granted free of charge to any person obtaining a copy ")) return "MIT";
  if (
    / permission to use copy modify (and or |and )?distribute this software for any purpose with or without fee is hereby granted /.test(t) &&
    t.includes(" provided that the above copyright notice and this permission notice appear in all copies ")
  ) {
    return "ISC";
  }
  return null;
}

// The first GNU licence title in the text names it (a GPL text mentions the
// LGPL and AGPL further down); the version follows the title or sits in the
// "either version 3 of the License" of a notice.
function gnuLicense(t: string): string | null {
  const titles: [string, "AGPL" | "LGPL" | "GPL"][] = [
    [" gnu affero general public license ", "AGPL"],
    [" gnu lesser general public license ", "LGPL"],
    [" gnu general public license ", "GPL"],
  ];
  let best: { at: number; family: "AGPL" | "LGPL" | "GPL"; title: string } | null = null;
  for (const [title, family] of titles) {
    const at = t.indexOf(title);
    if (at >= 0 && (!best || at < best.at)) best = { at, family, title };
  }
  if (!best) return null;
  const after = t.slice(best.at + best.title.length - 1, best.at + best.title.length + 200);
  const version = / version (\d)( \d)? /.exec(after);
  if (!version) return null;
  const v = version[2] ? `${version[1]}.${version[2].trim()}` : `${version[1]}.0`;
  const known: Record<string, string> = { "AGPL 3.0": "AGPL-3.0", "LGPL 3.0": "LGPL-3.0", "LGPL 2.1": "LGPL-2.1", "GPL 3.0": "GPL-3.0", "GPL 2.0": "GPL-2.0" };
  return known[`${best.family} ${v}`] ?? null;
}

const SPDX_IDS = [
  "MIT",
  "Apache-2.0",
  "GPL-2.0",
  "GPL-2.0-only",
  "GPL-2.0-or-later",
  "GPL-3.0",
  "GPL-3.0-only",
  "GPL-3.0-or-later",
  "LGPL-2.1",
  "LGPL-2.1-only",
  "LGPL-2.1-or-later",
  "LGPL-3.0",
  "LGPL-3.0-only",
  "LGPL-3.0-or-later",
  "AGPL-3.0",
  "AGPL-3.0-only",
  "AGPL-3.0-or-later",
  "BSD-2-Clause",
  "BSD-3-Clause",
  "BSD-4-Clause",
  "0BSD",
  "MPL-2.0",
  "ISC",
  "Unlicense",
  "CC0-1.0",
  "CC-BY-4.0",
  "CC-BY-SA-4.0",
  "EPL-2.0",
  "BSL-1.0",
  "Zlib",
  "WTFPL",
  "Artistic-2.0",
  "Python-2.0",
];
const BY_LOWER = new Map(SPDX_IDS.map((id) => [id.toLowerCase(), id]));
const ALIASES = new Map([
  ["apache 2.0", "Apache-2.0"],
  ["apache 2", "Apache-2.0"],
  ["apache2", "Apache-2.0"],
  ["apache-2", "Apache-2.0"],
  ["apache license 2.0", "Apache-2.0"],
  ["apache license, version 2.0", "Apache-2.0"],
  ["apache software license 2.0", "Apache-2.0"],
  ["mit license", "MIT"],
  ["the mit license", "MIT"],
  ["bsd 3-clause", "BSD-3-Clause"],
  ["bsd-3", "BSD-3-Clause"],
  ["new bsd", "BSD-3-Clause"],
  ["bsd 2-clause", "BSD-2-Clause"],
  ["bsd-2", "BSD-2-Clause"],
  ["simplified bsd", "BSD-2-Clause"],
  ["gplv2", "GPL-2.0"],
  ["gpl-2", "GPL-2.0"],
  ["gplv3", "GPL-3.0"],
  ["gpl-3", "GPL-3.0"],
  ["lgplv3", "LGPL-3.0"],
  ["agplv3", "AGPL-3.0"],
  ["mpl 2.0", "MPL-2.0"],
  ["mpl-2", "MPL-2.0"],
]);

/** A declared licence as SPDX: a known identifier, a common spelling of one, or an OR/AND expression of them. */
export function normalizeDeclaredLicense(declared: string): string | null {
  const s = declared.trim().replace(/^\((.*)\)$/, "$1");
  if (!s || s.length > 128) return null;
  const one = (id: string) => BY_LOWER.get(id.toLowerCase()) ?? ALIASES.get(id.toLowerCase()) ?? null;
  const parts = s.split(/\s+(OR|AND)\s+/);
  if (parts.length === 1) return one(s);
  const out: string[] = [];
  for (let i = 0; i < parts.length; i++) {
    if (i % 2 === 1) {
      out.push(parts[i]!);
      continue;
    }
    const id = BY_LOWER.get(parts[i]!.toLowerCase());
    if (!id) return null;
    out.push(id);
  }
  return out.join(" ");
}

export function detectLicense(ctx: AnalyzerContext): string | null {
  const files = ctx.files
    .filter((f) => !f.path.includes("/") && LICENSE_FILES.test(f.path))
    .sort((a, b) => FILE_ORDER.indexOf(a.path.toLowerCase()) - FILE_ORDER.indexOf(b.path.toLowerCase()) || (a.path < b.path ? -1 : 1));
  for (const f of files) {
    const text = ctx.readText(f.path);
    const id = text === null ? null : licenseFromText(text);
    if (id) return id;
  }
  return declaredLicense(ctx);
}

function declaredLicense(ctx: AnalyzerContext): string | null {
  const pkg = ctx.byPath.has("package.json") ? ctx.readText("package.json") : null;
  if (pkg !== null) {
    try {
      const json: unknown = JSON.parse(pkg);
      const license = json && typeof json === "object" ? (json as Record<string, unknown>).license : undefined;
      const declared = typeof license === "string" ? license : license && typeof license === "object" ? (license as Record<string, unknown>).type : undefined;
      const id = typeof declared === "string" ? normalizeDeclaredLicense(declared) : null;
      if (id) return id;
    } catch {
      // A broken package.json says nothing about the licence.
    }
  }
  const pyproject = ctx.byPath.has("pyproject.toml") ? ctx.readText("pyproject.toml") : null;
  if (pyproject !== null) {
    try {
      const project = (parseToml(pyproject) as Record<string, unknown>).project;
      const license = project && typeof project === "object" ? (project as Record<string, unknown>).license : undefined;
      const declared = typeof license === "string" ? license : license && typeof license === "object" ? (license as Record<string, unknown>).text : undefined;
      if (typeof declared === "string") return normalizeDeclaredLicense(declared);
    } catch {
      // Unparsable TOML: no declared licence.
    }
  }
  return null;
}
