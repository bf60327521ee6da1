import { describe, expect, it } from "vitest";
import { memoryContext } from "../testing/memory-context.ts";
import { pipfileLockRequirements, poetryConstraints } from "./python-locks.ts";
import { packageKind } from "./python-project.ts";
import { chooseRequirements, readRequirements } from "./python-requirements.ts";
import { resolvePython } from "./python.ts";

const resolve = (files: Record<string, string | null>, kinds: string[] = []) =>
  resolvePython({ ctx: memoryContext(files), experiments: kinds.map((kind) => ({ kind }) as never) });
const runs = (files: Record<string, string | null>) => resolve(files).steps.map((s) => s.run);

describe("chooseRequirements: the list a person would install", () => {
  it.each([
    [["requirements-dev.txt", "requirements.txt"], "requirements.txt"],
    [["requirements/base.txt", "requirements/dev.txt", "requirements/prod.txt"], "requirements/base.txt"],
    [["requirements-gpu.txt", "requirements-cpu.txt", "requirements-test.txt"], "requirements-cpu.txt"],
    [["requirements_dev.txt"], "requirements_dev.txt"],
    [["requirements/test.txt", "requirements-extra.txt"], "requirements-extra.txt"],
  ])("%j → %s", (candidates, chosen) => {
    const choice = chooseRequirements(candidates)!;
    expect(choice.chosen).toBe(chosen);
    expect(choice.others).toEqual(candidates.filter((c) => c !== chosen).sort());
  });
  it("none", () => expect(chooseRequirements([])).toBeNull());
});

describe("readRequirements", () => {
  it("follows -r and -c within the repository, once each, and sees `-e .`", () => {
    const ctx = memoryContext({
      "requirements/prod.txt": "-r base.txt\n-c ../constraints.txt\ngunicorn==22\n-e .\n",
      "requirements/base.txt": "Torch>=2 # the model\n-r prod.txt\n",
      "constraints.txt": "numpy<2\n",
    });
    expect(readRequirements(ctx, "requirements/prod.txt")).toEqual({
      files: ["requirements/prod.txt", "requirements/base.txt", "constraints.txt"],
      names: ["gunicorn", "torch", "numpy"],
      installsProject: true,
      unreadable: [],
    });
  });
});

describe("packageKind", () => {
  it.each([
    [{ "build-system": { "build-backend": "hatchling.build" }, project: {} }, null, { isPackage: true, backend: "hatchling.build" }],
    [{ "build-system": { requires: ["setuptools"] } }, null, { isPackage: true, backend: "setuptools.build_meta:__legacy__" }],
    [{ project: { dependencies: ["x"] } }, null, { isPackage: false, backend: null }],
    [{ tool: { ruff: {}, black: {} } }, null, { isPackage: false, backend: null }],
    [{ tool: { ruff: {} } }, "setup.py", { isPackage: true, backend: "setuptools (setup.py)" }],
    [{ "build-system": {}, tool: { poetry: { "package-mode": false } } }, null, { isPackage: false, backend: null }],
    [null, null, { isPackage: false, backend: null }],
  ])("%j %s", (doc, setup, want) => expect(packageKind(doc, setup)).toEqual(want));
});

describe("lockfiles to pip input", () => {
  it("poetry.lock: constraints, without what pip cannot pin", () => {
    const lock = `[[package]]\nname = "click"\nversion = "8.1.7"\n\n[[package]]\nname = "mylib"\nversion = "0.1.0"\n[package.source]\ntype = "git"\nurl = "https://example.com/mylib.git"\n\n[[package]]\nname = "Torch"\nversion = "2.3.0"\n`;
    expect(poetryConstraints(lock)).toEqual({
      lines: ["Torch==2.3.0", "click==8.1.7"],
      names: ["click", "mylib", "Torch"],
      notes: ["poetry.lock: mylib come from git, a URL or a folder; pip resolves them without a pin"],
    });
    expect(poetryConstraints("not toml [[")).toBeNull();
  });

  it("Pipfile.lock: the default section with markers and extras", () => {
    const lock = JSON.stringify({
      default: {
        requests: { version: "==2.32.3", extras: ["socks"] },
        pywin32: { version: "==306", markers: "sys_platform == 'win32'" },
        myapp: { editable: true, path: "." },
        private: { git: "https://example.com/p.git", ref: "abc" },
      },
      develop: { pytest: { version: "==8.0.0" } },
    });
    const out = pipfileLockRequirements(lock)!;
    expect(out.lines).toEqual(["-e .", "pywin32==306 ; sys_platform == 'win32'", "requests[socks]==2.32.3"]);
    expect(out.notes).toHaveLength(2);
  });
});

describe("resolvePython", () => {
  it("a plain repository: nothing", () => expect(resolve({ "README.md": "# x" })).toMatchObject({ toolchains: [], steps: [] }));

  it("scripts without manifests: the toolchain, no install", () => {
    expect(resolve({ "main.py": "print(1)" }, ["python-script"])).toMatchObject({ toolchains: [{ name: "python", version: null }], steps: [] });
  });

  it("requirements.txt, then the package itself (editable)", () => {
    const part = resolve({
      "requirements.txt": "click==8\n",
      "requirements-dev.txt": "pytest\n",
      "pyproject.toml": '[build-system]\nbuild-backend = "hatchling.build"\n',
    });
    expect(part.steps.map((s) => s.run)).toEqual(["pip install --no-input -r requirements.txt", "pip install --no-input -e ."]);
    expect(part.notes).toEqual(["not installed: requirements-dev.txt (requirements.txt was chosen)"]);
    expect(part.manifests).toEqual(["requirements.txt", "pyproject.toml"]);
  });

  it("a pyproject.toml with only tool settings is not a package", () => {
    expect(runs({ "requirements.txt": "x\n", "pyproject.toml": "[tool.ruff]\nline-length = 100\n" })).toEqual(["pip install --no-input -r requirements.txt"]);
  });

  it("uv.lock wins over requirements.txt, with uv from the index when missing", () => {
    const part = resolve({
      "uv.lock": 'version = 1\n[[package]]\nname = "torch"\nversion = "2.3.0"\n',
      "pyproject.toml": "[project]\nname = 'a'\n",
      "requirements.txt": "torch\n",
    });
    expect(part.steps.map((s) => s.name)).toEqual(["provide uv", "install uv.lock"]);
    expect(part.packages).toContain("torch");
    expect(part.notes).toEqual(["requirements.txt is not installed: uv.lock pins the same dependencies more exactly"]);
  });

  it("poetry.lock: pins as constraints for the project's own declaration, without poetry", () => {
    const files = {
      "poetry.lock": '[[package]]\nname = "click"\nversion = "8.1.7"\n',
      "pyproject.toml": '[tool.poetry]\npackage-mode = false\n[tool.poetry.dependencies]\npython = "^3.11"\nclick = "^8"\n',
    };
    expect(runs(files)).toEqual([
      `mkdir -p "$CODEPLANE_ENV_DIR/locks"\ncat > "$CODEPLANE_ENV_DIR/locks/poetry.txt" <<'CODEPLANE_EOF'\nclick==8.1.7\nCODEPLANE_EOF\npip install --no-input -c "$CODEPLANE_ENV_DIR/locks/poetry.txt" click`,
    ]);
    expect(resolve(files).toolchains).toEqual([
      { name: "python", version: "3.11", exact: false, source: "pyproject.toml [tool.poetry.dependencies] python ^3.11" },
    ]);
  });

  it("an unreadable poetry.lock falls back to the project", () => {
    expect(runs({ "poetry.lock": null, "pyproject.toml": '[build-system]\nbuild-backend = "poetry.core.masonry.api"\n' })).toEqual([
      "pip install --no-input -e .",
    ]);
  });

  it("setup.py alone installs the project; [project] without a build system installs its dependencies", () => {
    expect(runs({ "setup.py": "from setuptools import setup\nsetup()\n" })).toEqual(["pip install --no-input -e ."]);
    expect(runs({ "pyproject.toml": '[project]\nname = \'a\'\ndependencies = ["tabulate>=0.9", "click"]\n' })).toEqual([
      "pip install --no-input 'tabulate>=0.9' click",
    ]);
  });

  it("an invalid pyproject.toml is a note, not a crash", () => {
    expect(resolve({ "pyproject.toml": "[project\n" }).notes[0]).toMatch(/^pyproject.toml is not valid TOML/);
  });
});
