import { createHash } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { FileReader } from "../files.ts";
import { memoryContext } from "../testing/memory-context.ts";
import { resolveC } from "./c.ts";
import { resolveEnvironment, VENV_STEP } from "./index.ts";
import { resolveOthers } from "./others.ts";
import { notablePackages } from "./packages.ts";

const env = (files: Record<string, string | null>, kinds: string[] = []) =>
  resolveEnvironment({ ctx: memoryContext(files), experiments: kinds.map((kind) => ({ kind }) as never) });
const sha = (s: string) => createHash("sha256").update(s).digest("hex");

describe("resolveEnvironment", () => {
  it("a plain repository needs nothing", () => {
    expect(env({ "README.md": "# notes" })).toEqual({ toolchains: [], manifests: [], steps: [], cache_paths: [], packages: [], notes: [] });
  });

  it("creates the venv first, then installs, then provides the notebook tools; manifests hashed and sorted", () => {
    const out = env({ "requirements.txt": "torch==2.3\ntabulate\n", "nb.ipynb": "{}", ".python-version": "3.12\n" }, ["notebook"]);
    expect(out.steps.map((s) => s.ecosystem)).toEqual(["python", "python", "notebook", "notebook"]);
    expect(out.steps[0]).toEqual(VENV_STEP);
    expect(out.toolchains).toEqual([{ name: "python", version: "3.12", exact: true, source: ".python-version 3.12" }]);
    expect(out.manifests).toEqual([
      { path: ".python-version", sha256: sha("3.12\n") },
      { path: "requirements.txt", sha256: sha("torch==2.3\ntabulate\n") },
    ]);
    expect(out.packages).toEqual(["torch"]);
  });

  it("merges ecosystems in a fixed order and is deterministic", () => {
    const files = {
      "go.mod": "module m\ngo 1.23\n",
      "go.sum": "",
      "package.json": '{"dependencies":{"a":"1"}}',
      "package-lock.json": "{}",
      "Cargo.toml": "[package]\n",
    };
    const a = env(files);
    expect(a.toolchains.map((t) => t.name)).toEqual(["node", "go", "rust"]);
    expect(a.steps.map((s) => s.name)).toEqual(["npm ci", "go mod download"]);
    expect(env(files)).toEqual(a);
  });

  it("a manifest it cannot hash is a note, not a crash", () => {
    const ctx = { ...memoryContext({ "requirements.txt": "x\n" }), sha256: () => null };
    const out = resolveEnvironment({ ctx, experiments: [] });
    expect(out.manifests).toEqual([]);
    expect(out.notes).toEqual(["requirements.txt could not be hashed (too large or unreadable): a change to it alone does not make a new environment"]);
  });
});

describe("FileReader.sha256", () => {
  it("hashes bytes (not decoded text) past the text limit, and refuses past its own", () => {
    const dir = mkdtempSync(join(tmpdir(), "env-hash-"));
    const bytes = Buffer.concat([Buffer.from([0xff, 0xfe, 0x00]), Buffer.alloc(200_000, 97)]);
    writeFileSync(join(dir, "package-lock.json"), bytes);
    const reader = new FileReader(dir, { maxFiles: 10, maxDepth: 4, maxFileBytes: 1024, maxTotalReadBytes: 10_000_000 });
    const file = { path: "package-lock.json", size: bytes.length, executable: false };
    expect(reader.sha256(file)).toBe(createHash("sha256").update(bytes).digest("hex"));
    expect(reader.sha256(file, 1000)).toBeNull();
  });
});

describe("C and the languages without install steps", () => {
  it.each([
    [{ Makefile: "run:\n\tpython train.py\n", "train.py": "" }, []],
    [{ Makefile: "all:\n\tcc -o a a.c\n", "a.c": "" }, ["c"]],
    [{ "CMakeLists.txt": "project(x)\n", "src/x.cpp": "" }, ["c", "cmake"]],
  ])("%j", (files, names) => expect(resolveC({ ctx: memoryContext(files), experiments: [] }).toolchains.map((t) => t.name)).toEqual(names));

  it.each([
    [
      { "Cargo.toml": '[package]\nrust-version = "1.74"\n', "rust-toolchain.toml": '[toolchain]\nchannel = "1.79.0"\n' },
      { name: "rust", version: "1.79", exact: true },
    ],
    [
      { Gemfile: "", ".ruby-version": "ruby-3.3.0\n" },
      { name: "ruby", version: "3.3", exact: true },
    ],
    [{ "pom.xml": "<project/>" }, { name: "java", version: null, exact: false }],
  ])("%j", (files, want) => expect(resolveOthers({ ctx: memoryContext(files), experiments: [] }).toolchains[0]).toMatchObject(want));
});

describe("notablePackages", () => {
  it("keeps the large ones, normalised", () => {
    expect(notablePackages(["Torch>=2", "jax[cuda12]", "tabulate", "TensorFlow_CPU", "torch"])).toEqual(["jax", "tensorflow-cpu", "torch"]);
  });
});
