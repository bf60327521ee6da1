import { describe, expect, it } from "vitest";
import type { AnalyzerContext } from "./detector.ts";
import type { RepoFile } from "./files.ts";
import type { Syntax } from "./syntax.ts";
import { detectLicense, licenseFromText, normalizeDeclaredLicense } from "./summary-license.ts";

// The opening lines (and distinctive clauses) of each licence text.
const TEXTS: [string, string][] = [
  [
    "MIT",
    'MIT License\n\nCopyright (c) 2024 Someone\n\nPermission is hereby granted, free of charge, to any person obtaining a copy\nof this software and associated documentation files (the "Software"), to deal',
  ],
  [
    "Apache-2.0",
    "                                 Apache License\n                           Version 2.0, January 2004\n                        http://www.apache.org/licenses/",
  ],
  ["Apache-2.0", 'Licensed under the Apache License, Version 2.0 (the "License");\nyou may not use this file except in compliance with the License.'],
  [
    "GPL-3.0",
    "                    GNU GENERAL PUBLIC LICENSE\n                       Version 3, 29 June 2007\n ... use the GNU Lesser General Public License instead ... GNU Affero General Public License",
  ],
  ["GPL-2.0", "                    GNU GENERAL PUBLIC LICENSE\n                       Version 2, June 1991\n"],
  [
    "GPL-3.0",
    "This program is free software: you can redistribute it and/or modify\nit under the terms of the GNU General Public License as published by\nthe Free Software Foundation, either version 3 of the License, or\n(at your option) any later version.",
  ],
  [
    "LGPL-2.1",
    "                  GNU LESSER GENERAL PUBLIC LICENSE\n                       Version 2.1, February 1999\n [This is the first released version of the Lesser GPL.  It also counts\n as the successor of the GNU Library Public License, version 2]",
  ],
  [
    "LGPL-3.0",
    "                   GNU LESSER GENERAL PUBLIC LICENSE\n                       Version 3, 29 June 2007\n  This version of the GNU Lesser General Public License incorporates\nthe terms and conditions of version 3 of the GNU General Public\nLicense",
  ],
  ["AGPL-3.0", "                    GNU AFFERO GENERAL PUBLIC LICENSE\n                       Version 3, 19 November 2007\n"],
  [
    "BSD-2-Clause",
    "Redistribution and use in source and binary forms, with or without\nmodification, are permitted provided that the following conditions are met:\n\n1. Redistributions of source code must retain the above copyright notice",
  ],
  [
    "BSD-3-Clause",
    "Redistribution and use in source and binary forms, with or without\nmodification, are permitted provided that the following conditions are met:\n3. Neither the name of the copyright holder nor the names of its\n   contributors may be used to endorse or promote products derived from\n   this software without specific prior written permission.",
  ],
  ["MPL-2.0", "Mozilla Public License Version 2.0\n==================================\n"],
  ["MPL-2.0", "This Source Code Form is subject to the terms of the Mozilla Public\nLicense, v. 2.0."],
  [
    "ISC",
    "ISC License\n\nPermission to use, copy, modify, and/or distribute this software for any\npurpose with or without fee is hereby granted, provided that the above\ncopyright notice and this permission notice appear in all copies.",
  ],
  ["Unlicense", "This is free and unencumbered software released into the public domain.\n\nAnyone is free to copy"],
];

describe("licenseFromText", () => {
  it.each(TEXTS)("%s", (id, text) => expect(licenseFromText(text)).toBe(id));
  it.each([
    ["a custom licence", "All rights reserved. Do not copy."],
    [
      "0BSD has no notice clause",
      'Permission to use, copy, modify, and/or distribute this software for any\npurpose with or without fee is hereby granted.\n\nTHE SOFTWARE IS PROVIDED "AS IS"',
    ],
    ["a GPL title without a version", "GNU General Public License"],
    ["empty", ""],
  ])("%s → null", (_, text) => expect(licenseFromText(text)).toBeNull());
});

describe("normalizeDeclaredLicense", () => {
  it.each([
    ["MIT", "MIT"],
    ["mit", "MIT"],
    ["Apache 2.0", "Apache-2.0"],
    ["GPL-3.0-or-later", "GPL-3.0-or-later"],
    ["(MIT OR Apache-2.0)", "MIT OR Apache-2.0"],
    ["BSD", null],
    ["UNLICENSED", null],
    ["SEE LICENSE IN LICENSE.txt", null],
    ["MIT OR Proprietary", null],
  ])("%s → %s", (declared, id) => expect(normalizeDeclaredLicense(declared)).toBe(id));
});

describe("detectLicense", () => {
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
  const mit = TEXTS[0]![1];
  const gpl3 = TEXTS[3]![1];
  const lgpl3 = TEXTS[7]![1];

  it.each<[string, Record<string, string | null>, string | null]>([
    ["LICENSE at the root", { LICENSE: mit }, "MIT"],
    ["LICENCE.md", { "LICENCE.md": mit }, "MIT"],
    ["COPYING.txt", { "COPYING.txt": gpl3 }, "GPL-3.0"],
    ["COPYING.LESSER over COPYING", { COPYING: gpl3, "COPYING.LESSER": lgpl3 }, "LGPL-3.0"],
    ["not below the root", { "vendor/x/LICENSE": mit }, null],
    ["package.json when the file says nothing known", { LICENSE: "custom", "package.json": '{"license":"ISC"}' }, "ISC"],
    ["package.json's old object form", { "package.json": '{"license":{"type":"MIT","url":"x"}}' }, "MIT"],
    ["pyproject string", { "pyproject.toml": '[project]\nname = "x"\nlicense = "BSD-3-Clause"\n' }, "BSD-3-Clause"],
    ["pyproject table", { "pyproject.toml": '[project]\nlicense = { text = "Apache 2.0" }\n' }, "Apache-2.0"],
    ["broken manifests", { "package.json": "{", "pyproject.toml": "[[" }, null],
    ["an unreadable licence file", { LICENSE: null }, null],
  ])("%s", (_, files, id) => expect(detectLicense(ctx(files))).toBe(id));
});
