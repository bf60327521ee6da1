import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

// The user CLI (packages/cli) as a person runs it: its own process, its own
// config directory, stdout and stderr apart, and the exit code the shell gets.

export const CPL = new URL("../../packages/cli/bin/cpl.mjs", import.meta.url).pathname;

export interface CplResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A process running cpl, with what it wrote so far and when each stdout chunk came. */
export interface CplProcess {
  proc: ChildProcess;
  stdout: string;
  stderr: string;
  done: Promise<CplResult>;
}

/** The environment of a cpl process: a fresh config directory, and the server and key when given (CPL_URL, CPL_API_KEY). */
export function cplEnv(opts: { url?: string; key?: string; configDir?: string } = {}): Record<string, string> {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "",
    HOME: process.env.HOME ?? tmpdir(),
    CPL_CONFIG_DIR: opts.configDir ?? mkdtempSync(path.join(tmpdir(), "cpl-config-")),
  };
  if (process.env.NODE_COMPILE_CACHE) env.NODE_COMPILE_CACHE = process.env.NODE_COMPILE_CACHE;
  if (opts.url) env.CPL_URL = opts.url;
  if (opts.key) env.CPL_API_KEY = opts.key;
  return env;
}

export function spawnCpl(args: string[], env: Record<string, string>, stdin?: string): CplProcess {
  const proc = spawn(process.execPath, [CPL, ...args], { env, stdio: ["pipe", "pipe", "pipe"] });
  const p: CplProcess = {
    proc,
    stdout: "",
    stderr: "",
    done: new Promise((resolve, reject) => {
      proc.once("error", reject);
      proc.once("close", (code) => resolve({ code, stdout: p.stdout, stderr: p.stderr }));
    }),
  };
  proc.stdout.setEncoding("utf8").on("data", (s: string) => (p.stdout += s));
  proc.stderr.setEncoding("utf8").on("data", (s: string) => (p.stderr += s));
  proc.stdin.end(stdin ?? "");
  return p;
}

export const cpl = (args: string[], env: Record<string, string>, stdin?: string): Promise<CplResult> => spawnCpl(args, env, stdin).done;
