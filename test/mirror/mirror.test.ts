import { type ChildProcess, execFile as execFileCb, execFileSync, spawn } from "node:child_process";
import { closeSync, cpSync, existsSync, mkdirSync, openSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { freePort } from "../helpers/free-port.ts";
import { MIRROR_SCRIPT, mirrorSettings, type MirrorSettings } from "../helpers/mirror.ts";

// The local cluster's package mirror, for real and without the cluster: the
// fill (set-up, the only step that reaches PyPI, npm and the Go module proxy; a
// no-op once cached),
// then the same servers cluster-up starts, on loopback, and the clients runs
// use installing through them with the settings runs get
// (CODEPLANE_RUN_PREPROCESS_ENV). As root, servers and clients share a network
// namespace whose only interface is loopback: an install that tried to reach
// any registry but the mirror would fail here, not pass quietly.

const execFile = promisify(execFileCb);
const root = new URL("../..", import.meta.url).pathname;
const FILL_TIMEOUT = 600_000;
const INSTALL_TIMEOUT = 240_000;
const RUNNABLE = path.join(root, "test/fixtures/runnable");

let work: string;
let netns: ChildProcess | undefined;
const servers: ChildProcess[] = [];
let mirror: MirrorSettings;
/** A client's environment: nothing of this machine's pip or npm configuration, only the run's settings. */
let clientEnv: Record<string, string>;
let python: string;

/** argv inside the namespace, when there is one. */
const inNs = (argv: string[]) => (netns ? ["nsenter", `--net=/proc/${netns.pid}/ns/net`, "--", ...argv] : argv);

async function run(argv: string[], opts: { cwd?: string; env?: Record<string, string>; timeout?: number } = {}): Promise<string> {
  const [cmd, ...args] = inNs(argv);
  try {
    const { stdout } = await execFile(cmd!, args, {
      cwd: opts.cwd ?? work,
      env: opts.env ?? clientEnv,
      timeout: opts.timeout ?? INSTALL_TIMEOUT,
      maxBuffer: 64 << 20,
    });
    return stdout;
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    throw new Error(`${argv.join(" ")} failed: ${e.message}\n${(e.stdout ?? "").slice(-3000)}\n${(e.stderr ?? "").slice(-3000)}`, { cause: err });
  }
}

/** HTTP status and body of a GET against the mirror, from where the clients are. */
async function get(url: string): Promise<{ status: number; seconds: number; body: string }> {
  const out = await run(["curl", "-sS", "--max-time", "10", "-w", "\n%{http_code} %{time_total}", url], { env: { PATH: process.env.PATH ?? "" } });
  const nl = out.lastIndexOf("\n");
  const [status, seconds] = out.slice(nl + 1).split(" ");
  return { status: Number(status), seconds: Number(seconds), body: out.slice(0, nl) };
}

async function untilHealthy(url: string, server: ChildProcess, log: string) {
  for (let i = 0; i < 120; i++) {
    if (server.exitCode !== null) throw new Error(`mirror server exited (${server.exitCode}): ${readFileSync(log, "utf8").slice(-2000)}`);
    if ((await get(url).catch(() => ({ status: 0 }))).status === 200) return;
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`mirror server not healthy at ${url}: ${readFileSync(log, "utf8").slice(-2000)}`);
}

function serve(kind: "pypi" | "npm" | "go", port: number) {
  const log = path.join(work, `${kind}.log`);
  const [cmd, ...args] = inNs([MIRROR_SCRIPT, "serve", kind, "127.0.0.1", String(port), path.join(work, "state")]);
  const out = openSync(log, "w");
  const child = spawn(cmd!, args, { stdio: ["ignore", out, out] });
  closeSync(out);
  servers.push(child);
  return { child, log };
}

/** An interpreter of that Python version with venv, if this machine has one (pyenv's included). */
function pythonFor(version: string): string | undefined {
  const pyenv = path.join(process.env.PYENV_ROOT ?? path.join(homedir(), ".pyenv"), "versions");
  const candidates = existsSync(pyenv)
    ? readdirSync(pyenv)
        .filter((v) => v.startsWith(`${version}.`))
        .map((v) => path.join(pyenv, v, "bin", `python${version}`))
    : [];
  for (const c of [`python${version}`, ...candidates]) {
    try {
      return execFileSync(c, ["-c", "import sys, venv, ensurepip; print(sys.executable)"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
    } catch {
      // not this one
    }
  }
  return undefined;
}
const python313 = pythonFor("3.13");

/** This machine's Go build cache, by go's own default (before HOME is changed for the clients). */
function goBuildCache(): string {
  try {
    return execFileSync("go", ["env", "GOCACHE"], { encoding: "utf8", env: { ...process.env, PATH: `/usr/local/go/bin:${process.env.PATH ?? ""}` } }).trim();
  } catch {
    return path.join(work, "go-build-cache");
  }
}

beforeAll(async () => {
  // Set-up: fill the cache from the registries (cached by the lists' hash: a no-op when warm).
  await execFile(MIRROR_SCRIPT, ["fill"], { timeout: FILL_TIMEOUT, maxBuffer: 64 << 20 }).catch((err: { stderr?: string; message: string }) => {
    throw new Error(
      `hack/cluster/mirror.sh fill failed (it needs PyPI, the npm registry and the Go module proxy once): ${err.message}\n${err.stderr?.slice(-4000)}`,
      {
        cause: err,
      },
    );
  });
  work = mkdtempSync(path.join(tmpdir(), "codeplane-mirror-"));
  mkdirSync(path.join(work, "home"));
  let ports = { pypi: 3141, npm: 4873, go: 3143 };
  if (process.getuid?.() === 0) {
    netns = spawn("unshare", ["--net", "sh", "-c", "ip link set lo up && echo up && exec sleep 3600"], { stdio: ["ignore", "pipe", "inherit"] });
    await new Promise<void>((resolve, reject) => {
      netns!.stdout!.once("data", () => resolve());
      netns!.once("exit", (code) => reject(new Error(`unshare --net exited ${code}`)));
    });
  } else {
    // Without root there is no namespace: loopback, on free ports; the checks of the
    // servers' configuration below still show they have no way out.
    ports = { pypi: await freePort(), npm: await freePort(), go: await freePort() };
  }
  mirror = mirrorSettings("127.0.0.1", ports);
  python = execFileSync("python3", ["-c", "import sys; print(sys.executable)"], { encoding: "utf8" }).trim();
  clientEnv = {
    PATH: `${root}node_modules/.bin:/usr/local/go/bin:/usr/local/bin:/usr/bin:/bin`,
    HOME: path.join(work, "home"),
    LANG: "C.UTF-8",
    ...mirror.preprocessEnv,
    npm_config_cache: path.join(work, "npm-cache"),
    npm_config_update_notifier: "false",
    npm_config_audit: "false",
    npm_config_fund: "false",
    PIP_DISABLE_PIP_VERSION_CHECK: "1",
    // uv must not fetch a Python of its own
    UV_PYTHON_DOWNLOADS: "never",
    // what codeplane gives every workload pod besides (src/k8s/workspace.ts); GOMODCACHE per test
    GOTOOLCHAIN: "local",
    GOFLAGS: "-modcacherw",
    // the machine's build cache (content-addressed, so sharing it changes no result): a cold
    // one would compile the standard library first, a minute and more on two cores
    GOCACHE: goBuildCache(),
    GOENV: "off",
  };
  const pypi = serve("pypi", ports.pypi);
  const npm = serve("npm", ports.npm);
  await untilHealthy(`http://127.0.0.1:${ports.pypi}/health`, pypi.child, pypi.log);
  const go = serve("go", ports.go);
  await untilHealthy(`http://127.0.0.1:${ports.pypi}/health`, pypi.child, pypi.log);
  await untilHealthy(`http://127.0.0.1:${ports.npm}/-/ping`, npm.child, npm.log);
  await untilHealthy(`http://127.0.0.1:${ports.go}/health`, go.child, go.log);
}, FILL_TIMEOUT + 60_000);

afterAll(() => {
  for (const s of servers) s.kill();
  netns?.kill();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe("the package mirror", () => {
  it("gives runs the settings that point pip, uv, npm and go at it", () => {
    expect(mirror.preprocessEnv).toEqual({
      PIP_INDEX_URL: mirror.pypi,
      PIP_TRUSTED_HOST: "127.0.0.1",
      UV_INDEX_URL: mirror.pypi,
      NPM_CONFIG_REGISTRY: mirror.npm,
      npm_config_registry: mirror.npm,
      // nothing but the mirror (",off": no fallback to version control), and no checksum
      // database: go.sum is checked all the same (below)
      GOPROXY: `${mirror.go},off`,
      GOSUMDB: "off",
    });
    // the node's, as make dev passes them
    const node = mirrorSettings();
    expect(node.pypi).toBe("http://10.244.0.1:3141/simple/");
    expect(node.npm).toBe("http://10.244.0.1:4873/");
    expect(node.go).toBe("http://10.244.0.1:3143");
    expect(node.egressAllow).toBe("10.244.0.1/32@3141,10.244.0.1/32@4873,10.244.0.1/32@3143");
  });

  it(
    "installs click, tabulate, papermill and ipykernel with pip into a venv",
    async () => {
      const venv = path.join(work, "venv311");
      await run([python, "-m", "venv", venv]);
      await run([`${venv}/bin/pip`, "install", "--no-input", "click", "tabulate", "papermill", "ipykernel", "uv"]);
      expect(await run([`${venv}/bin/papermill`, "--version"])).toMatch(/^\d+\.\d+/);
      expect(await run([`${venv}/bin/python`, "-c", "import click, tabulate, ipykernel; print(tabulate.tabulate([[1, 2]]))"])).toContain("1  2");
    },
    INSTALL_TIMEOUT,
  );

  it(
    "builds a repository's own package with the build backends it serves (hatchling, setuptools)",
    async () => {
      for (const [name, backend, requires] of [
        ["hatch_demo", "hatchling.build", '"hatchling"'],
        ["setup_demo", "setuptools.build_meta", '"setuptools>=61"'],
      ] as const) {
        const dir = path.join(work, name);
        mkdirSync(path.join(dir, name), { recursive: true });
        writeFileSync(path.join(dir, name, "__init__.py"), "ANSWER = 42\n");
        writeFileSync(
          path.join(dir, "pyproject.toml"),
          `[build-system]\nrequires = [${requires}]\nbuild-backend = "${backend}"\n\n[project]\nname = "${name}"\nversion = "0.1.0"\ndependencies = ["click"]\n`,
        );
      }
      const venv = path.join(work, "venv-build");
      await run([python, "-m", "venv", venv]);
      await run([`${venv}/bin/pip`, "install", "--no-input", path.join(work, "hatch_demo"), path.join(work, "setup_demo")]);
      expect(await run([`${venv}/bin/python`, "-c", "import hatch_demo, setup_demo, click; print(hatch_demo.ANSWER + setup_demo.ANSWER)"])).toBe("84\n");
    },
    INSTALL_TIMEOUT,
  );

  it.skipIf(!python313)(
    "installs the same for CPython 3.13",
    async () => {
      const venv = path.join(work, "venv313");
      await run([python313!, "-m", "venv", venv]);
      await run([`${venv}/bin/pip`, "install", "--no-input", "click", "tabulate", "papermill", "ipykernel"]);
      expect(await run([`${venv}/bin/python`, "-c", "import sys, papermill, ipykernel; print(sys.version_info[:2])"])).toBe("(3, 13)\n");
    },
    INSTALL_TIMEOUT,
  );

  it(
    "installs with uv through UV_INDEX_URL",
    async () => {
      const uv = path.join(work, "venv311", "bin", "uv");
      const venv = path.join(work, "venv-uv");
      await run([uv, "venv", "--quiet", "--python", python, venv]);
      await run([uv, "pip", "install", "--python", `${venv}/bin/python`, "tabulate", "click"]);
      expect(await run([`${venv}/bin/python`, "-c", "import tabulate, click; print('ok')"])).toBe("ok\n");
    },
    INSTALL_TIMEOUT,
  );

  it(
    "installs commander and picocolors with npm, at the versions it holds",
    async () => {
      const app = path.join(work, "app");
      mkdirSync(app);
      writeFileSync(path.join(app, "package.json"), JSON.stringify({ name: "app", version: "1.0.0", private: true }));
      await run(["npm", "install", "commander", "picocolors"], { cwd: app });
      const pkg = JSON.parse(readFileSync(path.join(app, "package.json"), "utf8")) as { dependencies: Record<string, string> };
      expect(pkg.dependencies.commander).toMatch(/^\^12\./);
      expect(pkg.dependencies.picocolors).toMatch(/^\^1\./);
      expect(await run(["node", "-e", "require('commander'); console.log(require('picocolors').bold('ok'))"], { cwd: app })).toContain("ok");
    },
    INSTALL_TIMEOUT,
  );

  it(
    "installs a package-lock.json that names the public registry from it (npm ci)",
    async () => {
      // as committed in a repository: resolved URLs on registry.npmjs.org, which npm
      // replaces with the configured registry (replace-registry-host)
      const meta = JSON.parse((await get(`${mirror.npm}commander`)).body) as { versions: Record<string, { dist: { integrity: string } }> };
      const [version, { dist }] = Object.entries(meta.versions)[0]!;
      const app = path.join(work, "locked-app");
      mkdirSync(app);
      const manifest = { name: "locked-app", version: "1.0.0", private: true, dependencies: { commander: `^${version}` } };
      writeFileSync(path.join(app, "package.json"), JSON.stringify(manifest));
      writeFileSync(
        path.join(app, "package-lock.json"),
        JSON.stringify({
          name: "locked-app",
          version: "1.0.0",
          lockfileVersion: 3,
          requires: true,
          packages: {
            "": manifest,
            "node_modules/commander": {
              version,
              resolved: `https://registry.npmjs.org/commander/-/commander-${version}.tgz`,
              integrity: dist.integrity,
            },
          },
        }),
      );
      await run(["npm", "ci", "--ignore-scripts"], { cwd: app });
      const installed = JSON.parse(readFileSync(path.join(app, "node_modules", "commander", "package.json"), "utf8")) as { version: string };
      expect(installed.version).toBe(version);
    },
    INSTALL_TIMEOUT,
  );

  it(
    "runs pnpm 9 with npx, and pnpm installs from it too",
    async () => {
      expect(await run(["npx", "--yes", "pnpm@9", "--version"])).toMatch(/^9\.\d+\.\d+\n$/);
      const app = path.join(work, "pnpm-app");
      mkdirSync(app);
      writeFileSync(path.join(app, "package.json"), JSON.stringify({ name: "pnpm-app", version: "1.0.0", private: true }));
      await run(["npx", "--yes", "pnpm@9", "add", "picocolors"], { cwd: app });
      expect(existsSync(path.join(app, "node_modules", "picocolors", "package.json"))).toBe(true);
    },
    INSTALL_TIMEOUT,
  );

  /** The Go CLI fixture (cobra, golang.org/x/text) copied afresh, and a module cache of its own, as an environment build has. */
  function goModule(name: string): { dir: string; env: Record<string, string> } {
    const dir = path.join(work, name);
    cpSync(path.join(RUNNABLE, "go-cobra-cli"), dir, { recursive: true });
    const gopath = path.join(work, `${name}-env`, "go");
    return { dir, env: { ...clientEnv, GOPATH: gopath, GOMODCACHE: path.join(gopath, "pkg", "mod") } };
  }

  it(
    "downloads a Go CLI's modules with go mod download through GOPROXY, then builds, tests and runs it with no proxy at all",
    async () => {
      const { dir, env } = goModule("go-cli");
      // the environment build's step (the analyzer's), with the mirror's settings
      await run(["go", "mod", "download"], { cwd: dir, env });
      // the run: the module cache alone, no proxy
      const offline = { ...env, GOPROXY: "off" };
      expect(await run(["go", "run", "."], { cwd: dir, env: offline })).toMatch(/ledger: 14 entries in 5 categories, total 1,968\.05/);
      expect(await run(["go", "run", ".", "--lang", "de", "--top", "1"], { cwd: dir, env: offline })).toMatch(/^Rent +1\.450,00\n/);
      expect(await run(["go", "test", "./..."], { cwd: dir, env: offline })).toMatch(/^ok\s+example\.com\/ledger\/internal\/ledger/m);
    },
    INSTALL_TIMEOUT,
  );

  it(
    "checks a repository's go.sum with GOSUMDB off: a module whose hash differs is refused",
    async () => {
      const { dir, env } = goModule("go-cli-tampered");
      const sum = readFileSync(path.join(dir, "go.sum"), "utf8");
      const tampered = sum.replace(/^(github\.com\/spf13\/pflag v\S+ h1:)\S+$/m, "$1AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=");
      expect(tampered).not.toBe(sum);
      writeFileSync(path.join(dir, "go.sum"), tampered);
      await expect(run(["go", "mod", "download"], { cwd: dir, env })).rejects.toThrow(/SECURITY ERROR|checksum mismatch/);
    },
    INSTALL_TIMEOUT,
  );

  it("has no way out: no uplink, no fallback, a 404 for what it does not hold", async () => {
    // verdaccio's configuration: no uplinks, and no package rule proxies anywhere
    const config = parseYaml(readFileSync(path.join(work, "state", "verdaccio.yaml"), "utf8")) as {
      uplinks?: Record<string, unknown>;
      packages: Record<string, { proxy?: unknown }>;
    };
    expect(config.uplinks ?? {}).toEqual({});
    expect(Object.values(config.packages).filter((p) => p.proxy !== undefined)).toEqual([]);
    // packages not in the lists: answered by the mirror itself, at once
    const npmMissing = await get(`${mirror.npm}left-pad`);
    expect(npmMissing.status).toBe(404);
    expect(npmMissing.seconds).toBeLessThan(2);
    // pypiserver's fallback would redirect (303) to pypi.org; it is off
    const pypiMissing = await get(`${mirror.pypi}requests-oauthlib/`);
    expect(pypiMissing.status).toBe(404);
    expect(pypiMissing.seconds).toBeLessThan(2);
    // it advertises only what it holds: every version of commander has its tarball there
    const meta = JSON.parse((await get(`${mirror.npm}commander`)).body) as {
      "dist-tags": { latest: string };
      versions: Record<string, { dist: { tarball: string } }>;
    };
    expect(meta["dist-tags"].latest).toMatch(/^12\./);
    for (const v of Object.values(meta.versions)) {
      expect(v.dist.tarball.startsWith(mirror.npm)).toBe(true);
      expect((await get(v.dist.tarball)).status).toBe(200);
    }
    // and nobody can publish or upload: no users can be added, and pypiserver has no password file
    const upload = await run(
      ["curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}", "-F", ":action=file_upload", "-F", "name=x", mirror.pypi.replace("/simple/", "/")],
      {
        env: { PATH: process.env.PATH ?? "" },
      },
    );
    expect(upload).toBe("401");
    // the Go proxy: files only, no proxying anywhere, no listings; a module it does not hold
    // is a 404 at once, and go stops there (",off")
    const nginx = readFileSync(path.join(work, "state", "go-nginx.conf"), "utf8");
    expect(nginx).not.toMatch(/proxy_pass|fastcgi_pass|autoindex on/);
    const goMissing = await get(`${mirror.go}/rsc.io/quote/@v/list`);
    expect(goMissing.status).toBe(404);
    expect(goMissing.seconds).toBeLessThan(2);
    expect((await get(`${mirror.go}/github.com/`)).status).toBe(404);
    expect((await get(`${mirror.go}/github.com/spf13/cobra/@v/list`)).body).toMatch(/^v1\.10\.2$/m);
    const { dir, env } = goModule("go-cli-missing");
    await expect(run(["go", "get", "rsc.io/quote@v1.5.2"], { cwd: dir, env })).rejects.toThrow(
      /rsc\.io\/quote@v1\.5\.2: module lookup disabled by GOPROXY=off/,
    );
  });
});
