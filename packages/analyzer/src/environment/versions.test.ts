import { describe, expect, it } from "vitest";
import { memoryContext } from "../testing/memory-context.ts";
import { parseGoMod } from "./go.ts";
import { enginesFloor, nodeMajor, nodeVersion } from "./node-version.ts";
import { pythonFloor, pythonVersion } from "./python-version.ts";

describe("pythonFloor", () => {
  it.each([
    [">=3.10", { version: "3.10", exact: false }],
    [">=3.9,<3.13", { version: "3.9", exact: false }],
    ["~=3.11", { version: "3.11", exact: false }],
    ["==3.12.*", { version: "3.12", exact: true }],
    ["^3.10", { version: "3.10", exact: false }],
    ["3.11", { version: "3.11", exact: true }],
    [">=3", { version: "3.0", exact: false }],
    ["<3.12", null],
    ["!=3.9.*", null],
    ["", null],
  ])("%s", (spec, want) => expect(pythonFloor(spec)).toEqual(want));
});

describe("pythonVersion: the most specific source first", () => {
  const project = { project: { "requires-python": ">=3.10" } };
  it.each([
    [{ ".python-version": "3.12.1\n" }, project, { version: "3.12", exact: true, source: ".python-version 3.12.1" }],
    [{ ".python-version": "# pyenv\nsystem\n" }, project, { version: "3.10", exact: false, source: "pyproject.toml requires-python >=3.10" }],
    [{ "runtime.txt": "python-3.11.4" }, null, { version: "3.11", exact: true, source: "runtime.txt python-3.11.4" }],
    [
      {},
      { tool: { poetry: { dependencies: { python: "^3.9" } } } },
      { version: "3.9", exact: false, source: "pyproject.toml [tool.poetry.dependencies] python ^3.9" },
    ],
    [{}, null, null],
  ])("%j", (files, doc, want) => expect(pythonVersion(memoryContext(files), doc, null)).toEqual(want));

  it("reads Pipfile's python_version", () => {
    expect(pythonVersion(memoryContext({}), null, { requires: { python_version: "3.11" } })).toEqual({
      version: "3.11",
      exact: true,
      source: "Pipfile python_version 3.11",
    });
  });
});

describe("Node versions", () => {
  it.each([
    ["v20.11.1", "20"],
    ["22", "22"],
    ["lts/iron", "20"],
    ["lts/*", null],
    ["node", null],
  ])("nodeMajor(%s)", (s, want) => expect(nodeMajor(s)).toBe(want));

  it.each([
    [">=18", { version: "18", exact: false }],
    ["^20.9.0", { version: "20", exact: true }],
    ["20.x", { version: "20", exact: true }],
    ["18 || 20", { version: "18", exact: false }],
    [">=18.17 <23", { version: "18", exact: false }],
    ["*", null],
  ])("enginesFloor(%s)", (spec, want) => expect(enginesFloor(spec)).toEqual(want));

  it("prefers .nvmrc to engines", () => {
    const ctx = memoryContext({ ".nvmrc": "v22.3.0\n" });
    expect(nodeVersion(ctx, { engines: { node: ">=18" } })).toEqual({ version: "22", exact: true, source: ".nvmrc v22.3.0" });
    expect(nodeVersion(memoryContext({ ".node-version": "lts/*" }), { engines: { node: ">=18" } })?.source).toBe("package.json engines.node >=18");
  });
});

describe("parseGoMod", () => {
  it.each([
    ["module m\n\ngo 1.22\n", { go: "1.22", toolchain: null, requires: false }],
    ["module m\ngo 1.21.5\ntoolchain go1.23.2\nrequire golang.org/x/text v0.14.0\n", { go: "1.21.5", toolchain: "1.23.2", requires: true }],
    ["module m\nrequire (\n\tgithub.com/a/b v1.0.0\n)\n", { go: null, toolchain: null, requires: true }],
  ])("%j", (text, want) => expect(parseGoMod(text)).toEqual(want));
});
