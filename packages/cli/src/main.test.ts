import { execFileSync } from "node:child_process";
import { mkdtempSync, statSync } from "node:fs";
import { createServer, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { bashScript, zshScript } from "./commands/completion.ts";
import { exitStatusOf, runBody } from "./commands/runs.ts";
import { resolveTarget, Store } from "./config.ts";
import { main } from "./main.ts";
import type { Io } from "./output.ts";
import { COMMANDS } from "./spec.ts";

function io(env: Record<string, string> = {}): Io & { out: string; err: string } {
  const o = {
    out: "",
    err: "",
    env: { CPL_CONFIG_DIR: mkdtempSync(path.join(tmpdir(), "cpl-unit-")), ...env },
    stdout: { write: (s: string | Uint8Array) => void (o.out += String(s)) },
    stderr: { write: (s: string | Uint8Array) => void (o.err += String(s)) },
    readStdin: async () => "",
  };
  return o;
}

describe("main", () => {
  it("prints help and the version, exit 0", async () => {
    const a = io();
    expect(await main(["--help"], a)).toBe(0);
    for (const c of COMMANDS) expect(a.out).toContain(c.words.join(" "));
    const b = io();
    expect(await main(["run", "--help"], b)).toBe(0);
    expect(b.out).toContain("--experiment ID");
    const c = io();
    expect(await main(["version"], c)).toBe(0);
    expect(c.out).toMatch(/^cpl \d+\.\d+\.\d+\n$/);
  });

  it.each<[string[], RegExp]>([
    [["nope"], /unknown command "nope"/],
    [["runs", "lss"], /unknown command "runs lss" \(did you mean runs ls\?\)/],
    [["repos"], /cpl repos: give one of its commands/],
    [["repos", "ls", "--limt", "2"], /unknown option --limt \(did you mean --limit\?\)/],
    [["files", "cat", "only-repo"], /missing arguments: <repo> <path>/],
    [["runs", "get", "a", "b"], /too many arguments/],
    [["run", "repo"], /give --experiment ID \(see cpl analyze\) or a command after --/],
    [["run", "repo", "-p", "a=1", "--", "ls"], /-p sets an experiment's parameters/],
    [["run", "repo", "-e", "x", "--", "ls"], /not both/],
    [["run", "repo", "-e", "x", "-p", "novalue"], /-p takes key=value/],
    [["-o", "yaml", "repos", "ls"], /--output must be one of table, json/],
    [["completion", "fish"], /bash or zsh/],
  ])("%j is a usage error (exit 2)", async (argv, message) => {
    const a = io();
    expect(await main(argv, a)).toBe(2);
    expect(a.err).toMatch(message);
  });

  it("without a context: not signed in, exit 3, and says how to sign in", async () => {
    const a = io();
    expect(await main(["repos", "ls"], a)).toBe(3);
    expect(a.err).toContain("cpl login <url>");
  });

  it("an unreachable server is exit 1 with the address", async () => {
    // A port nothing listens on: one the system gave a server that has closed.
    const server = createServer();
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const { port } = server.address() as AddressInfo;
    await new Promise((r) => server.close(r));
    const a = io({ CPL_URL: `http://127.0.0.1:${port}`, CPL_API_KEY: "k" });
    expect(await main(["repos", "ls"], a)).toBe(1);
    expect(a.err).toContain(`cannot reach http://127.0.0.1:${port}: ECONNREFUSED`);
  });
});

describe("run's body and exit status", () => {
  it("an experiment with its parameters, or a command; the other options", () => {
    expect(runBody({ options: { experiment: "python:train.py", param: ["lr=0.1", "epochs=3"] }, rest: null })).toEqual({
      analyzed_experiment: "python:train.py",
      parameters: { lr: "0.1", epochs: "3" },
    });
    expect(runBody({ options: { compute: "gpu", timeout: "60", environment: "none" }, rest: ["python3", "-c", "print(1)"] })).toEqual({
      command: ["python3", "-c", "print(1)"],
      compute_type: "gpu",
      timeout_seconds: 60,
      environment: "none",
    });
    expect(() => runBody({ options: { timeout: "soon" }, rest: ["x"] })).toThrow(/--timeout takes a positive whole number/);
    expect(runBody({ options: { retries: "2" }, rest: ["x"] })).toEqual({ command: ["x"], retries: 2 });
    expect(runBody({ options: { retries: "0" }, rest: ["x"] })).toEqual({ command: ["x"], retries: 0 });
    expect(() => runBody({ options: { retries: "6" }, rest: ["x"] })).toThrow(/--retries takes a whole number from 0 to 5/);
  });

  it.each<[string, number | null, number]>([
    ["completed", 0, 0],
    ["failed", 3, 3],
    ["completed", null, 0],
    ["failed", null, 125],
    ["cancelled", null, 125],
    ["cancelled", 137, 137],
  ])("%s with exit code %s exits %s", (status, code, expected) => expect(exitStatusOf(status, code)).toBe(expected));
});

describe("the config store", () => {
  it("writes both files mode 0600 in a 0700 directory; contexts resolve by flag, env and current", () => {
    const dir = path.join(mkdtempSync(path.join(tmpdir(), "cpl-store-")), "cpl");
    const store = new Store({ CPL_CONFIG_DIR: dir });
    store.writeConfig({ current: "a", contexts: { a: { url: "http://a" }, b: { url: "http://b" } } });
    store.setCredential("a", { type: "api_key", key: "ka" });
    store.setCredential("b", { type: "api_key", key: "kb" });
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(store.configFile).mode & 0o777).toBe(0o600);
    expect(statSync(store.credentialsFile).mode & 0o777).toBe(0o600);
    expect(resolveTarget(store, {}, undefined)).toEqual({ name: "a", url: "http://a", credential: { type: "api_key", key: "ka" } });
    expect(resolveTarget(store, { CPL_CONTEXT: "b" }, undefined).url).toBe("http://b");
    expect(resolveTarget(store, { CPL_CONTEXT: "b" }, "a").url).toBe("http://a");
    expect(resolveTarget(store, { CPL_URL: "http://env/", CPL_API_KEY: "ke" }, undefined)).toEqual({
      name: "env",
      url: "http://env",
      credential: { type: "api_key", key: "ke" },
    });
    expect(() => resolveTarget(store, {}, "c")).toThrow(/no context named "c" \(known: a, b\)/);
    store.setCredential("a", null);
    expect(store.readCredentials()).toEqual({ b: { type: "api_key", key: "kb" } });
  });

  it("the XDG config directory", () => {
    expect(new Store({ XDG_CONFIG_HOME: "/x/cfg", HOME: "/home/u" }).dir).toBe("/x/cfg/cpl");
    expect(new Store({ HOME: "/home/u" }).dir).toBe("/home/u/.config/cpl");
    // A relative XDG_CONFIG_HOME is ignored, as the specification says.
    expect(new Store({ XDG_CONFIG_HOME: "rel", HOME: "/home/u" }).dir).toBe("/home/u/.config/cpl");
  });
});

describe("completion", () => {
  it("names every command word and option, and the choices of options", () => {
    const script = bashScript();
    for (const c of COMMANDS) {
      expect(script).toContain(c.words.at(-1)!);
      for (const o of c.options) expect(script).toContain(`--${o.name}`);
    }
    expect(script).toContain('compgen -W "table json"');
    expect(script).toContain("complete -o default -F _cpl cpl");
    expect(zshScript()).toMatch(/^#compdef cpl\n/);
  });

  it("completes in bash: commands, subcommands, options, choices, and nothing after --", () => {
    const complete = (...words: string[]) =>
      execFileSync(
        "bash",
        ["-c", `${bashScript()}\nCOMP_WORDS=("$@"); COMP_CWORD=$((\${#COMP_WORDS[@]}-1)); _cpl; echo "\${COMPREPLY[*]}"`, "bash", ...words],
        {
          encoding: "utf8",
        },
      ).trim();
    expect(complete("cpl", "ru")).toBe("run runs");
    expect(complete("cpl", "runs", "")).toBe("ls get cancel");
    expect(complete("cpl", "runs", "ls", "--st")).toBe("--status");
    expect(complete("cpl", "run", "repo", "-o", "")).toBe("table json");
    expect(complete("cpl", "run", "repo", "--", "python3", "--f")).toBe("");
  });
});
