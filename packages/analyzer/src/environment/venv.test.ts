import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { VENV_STEP } from "./index.ts";

// The venv step as a build runs it (`sh -eu -c`), with this machine's python3: the venv holds no
// pip of its own, and its pip commands still install into it. The catalog images' semantics (editable
// installs, uv, setuptools) are checked in the environments e2e tests.

const hasVenv = spawnSync("python3", ["-m", "venv", "--help"], { stdio: "ignore" }).status === 0;
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function createVenv(extraEnv: Record<string, string> = {}, cwd?: string): string {
  const envDir = mkdtempSync(join(tmpdir(), "cp-venv-"));
  dirs.push(envDir);
  execFileSync("sh", ["-eu", "-c", VENV_STEP.run], { cwd, env: { ...process.env, ...extraEnv, CODEPLANE_ENV_DIR: envDir }, stdio: "pipe" });
  return join(envDir, "python");
}

const sitePackages = (venv: string) => {
  const lib = join(venv, "lib");
  return join(
    lib,
    readdirSync(lib).find((d) => d.startsWith("python"))!,
    "site-packages",
  );
};

/** A pure-Python wheel made by hand, so pip installs it with no index and no build backend. */
function demoWheel(dir: string): string {
  const file = join(dir, "cpdemo-1.0-py3-none-any.whl");
  const script = [
    "import sys, zipfile",
    "z = zipfile.ZipFile(sys.argv[1], 'w')",
    "z.writestr('cpdemo/__init__.py', 'X = 1\\n')",
    "z.writestr('cpdemo-1.0.dist-info/METADATA', 'Metadata-Version: 2.1\\nName: cpdemo\\nVersion: 1.0\\n')",
    "z.writestr('cpdemo-1.0.dist-info/WHEEL', 'Wheel-Version: 1.0\\nGenerator: test\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n')",
    "z.writestr('cpdemo-1.0.dist-info/RECORD', '')",
    "z.close()",
  ].join("\n");
  execFileSync("python3", ["-c", script, file]);
  return file;
}

describe.skipIf(!hasVenv)("the venv step", () => {
  it("makes a venv without pip whose pip, pip3 and pip3.X install into it", { timeout: 120_000 }, () => {
    const venv = createVenv();
    expect(readdirSync(sitePackages(venv)).filter((f) => /^pip|^setuptools/.test(f))).toEqual([]);
    const version = execFileSync(join(venv, "bin/python"), ["-c", "import sys; print('%d.%d' % sys.version_info[:2])"], { encoding: "utf8" }).trim();
    for (const name of ["pip", "pip3", `pip${version}`]) {
      expect(execFileSync(join(venv, "bin", name), ["--version"], { encoding: "utf8" })).toMatch(/^pip \d+/);
    }
    const wheel = demoWheel(dirs[dirs.length - 1]!);
    const env = { ...process.env, PATH: `${join(venv, "bin")}:${process.env.PATH}`, PIP_DISABLE_PIP_VERSION_CHECK: "1" };
    execFileSync("pip", ["install", "-q", "--no-index", "--no-deps", wheel], { env, stdio: "pipe" });
    expect(existsSync(join(sitePackages(venv), "cpdemo", "__init__.py"))).toBe(true);
    const imported = execFileSync("python", ["-c", "import cpdemo, sys; print(cpdemo.__file__.startswith(sys.prefix), sys.prefix)"], { env, encoding: "utf8" });
    expect(imported.trim()).toBe(`True ${venv}`);
  });

  it("never runs the checkout's own modules in place of venv or pip (a repository's token.py, typing.py)", { timeout: 120_000 }, () => {
    // Steps and runs start in the checkout, and `python -m` imports from the current directory first.
    const checkout = mkdtempSync(join(tmpdir(), "cp-checkout-"));
    dirs.push(checkout);
    for (const name of ["token.py", "typing.py"]) writeFileSync(join(checkout, name), "import sys\nprint('the repository ran')\nsys.exit(7)\n");
    const venv = createVenv({}, checkout);
    const version = spawnSync(join(venv, "bin/pip"), ["--version"], { cwd: checkout, encoding: "utf8" });
    expect([version.status, version.stdout]).toEqual([0, expect.stringMatching(/^pip \d+/)]);
    expect(version.stdout + version.stderr).not.toContain("the repository ran");
    // And an exit code of pip's own still passes through.
    const failed = spawnSync(join(venv, "bin/pip"), ["install", "--no-index", "no-such-package-here"], { cwd: checkout, encoding: "utf8" });
    expect(failed.status).toBe(1);
  });

  it("puts pip in the venv when the image's python has none", { timeout: 120_000 }, () => {
    // A pip that cannot be imported stands for an image without one (the venv's own is installed isolated, -I).
    const shadow = mkdtempSync(join(tmpdir(), "cp-nopip-"));
    dirs.push(shadow);
    mkdirSync(join(shadow, "pip"));
    writeFileSync(join(shadow, "pip", "__init__.py"), "raise ImportError('no pip in this image')\n");
    const venv = createVenv({ PYTHONPATH: shadow });
    expect(readdirSync(sitePackages(venv)).some((f) => /^pip-.*\.dist-info$/.test(f))).toBe(true);
    expect(execFileSync(join(venv, "bin/pip"), ["--version"], { encoding: "utf8" })).toContain(sitePackages(venv));
  });
});
