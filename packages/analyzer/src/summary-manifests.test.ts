import { describe, expect, it } from "vitest";
import { findManifests, manifestFrameworks, mergeFrameworks, requirementName } from "./summary-manifests.ts";
import { memoryContext } from "./testing/memory-context.ts";

const context = (files: Record<string, string | null>) => memoryContext(files);

describe("findManifests", () => {
  it("lists manifests anywhere, sorted", () => {
    const ctx = context({
      "web/package.json": "{}",
      "requirements.txt": "",
      "requirements-dev.txt": "",
      "requirements/base.txt": "",
      "svc/go.mod": "",
      "Cargo.toml": "",
      "app/build.gradle.kts": "",
      "environment.yml": "",
      "setup.py": "",
      "setup.cfg": "",
      Pipfile: "",
      "pom.xml": "",
      Gemfile: "",
      "composer.json": "",
      "pyproject.toml": "",
      "src/main.py": "",
      "package-lock.json": "",
    });
    expect(findManifests(ctx)).toEqual([
      "Cargo.toml",
      "Gemfile",
      "Pipfile",
      "app/build.gradle.kts",
      "composer.json",
      "environment.yml",
      "pom.xml",
      "pyproject.toml",
      "requirements-dev.txt",
      "requirements.txt",
      "setup.cfg",
      "setup.py",
      "svc/go.mod",
      "web/package.json",
    ]);
  });
});

describe("requirementName", () => {
  it.each([
    ["torch==2.3.0", "torch"],
    ["scikit_learn>=1.0 ; python_version > '3.8'", "scikit-learn"],
    ["Flask[async]~=3.0  # web", "flask"],
    ["pytorch.lightning", "pytorch-lightning"],
    ["mypkg @ https://example.com/mypkg.whl", "mypkg"],
    ["-r other.txt", null],
    ["-e git+https://github.com/x/y#egg=y", null],
    ["https://example.com/x.whl", null],
    ["# comment", null],
    ["", null],
  ])("%j → %s", (line, name) => expect(requirementName(line)).toBe(name));
});

describe("manifestFrameworks", () => {
  it("reads requirements files and pyproject dependencies of every kind", () => {
    const ctx = context({
      "requirements.txt": "numpy\ntorch>=2\n--index-url https://x\n",
      "requirements-dev.txt": "pytest\nblack\n",
      "pyproject.toml": [
        "[project]",
        'dependencies = ["pandas>=2", "click"]',
        "[project.optional-dependencies]",
        'serve = ["fastapi"]',
        "[dependency-groups]",
        'ui = ["streamlit", { include-group = "x" }]',
        "[tool.poetry.dependencies]",
        'python = "^3.10"',
        'transformers = "^4"',
        "[tool.poetry.group.ml.dependencies]",
        'lightning = "*"',
      ].join("\n"),
      "svc/pyproject.toml": "not toml [[",
      "svc/requirements.txt": null,
    });
    expect(mergeFrameworks(manifestFrameworks(ctx, findManifests(ctx)))).toEqual([
      "Click",
      "FastAPI",
      "Hugging Face Transformers",
      "NumPy",
      "pandas",
      "PyTorch",
      "PyTorch Lightning",
      "Streamlit",
    ]);
  });
});

describe("mergeFrameworks", () => {
  it("dedupes and sorts without regard to case", () => {
    expect(mergeFrameworks(["PyTorch", "numpy"], ["NumPy", "PyTorch", "", "Express"])).toEqual(["Express", "NumPy", "numpy", "PyTorch"]);
  });
});
