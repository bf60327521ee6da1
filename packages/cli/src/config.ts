import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import path from "node:path";
import { CliError, EXIT } from "./errors.ts";

// Contexts (one per server) and their credentials, in the XDG config
// directory: $CPL_CONFIG_DIR, else $XDG_CONFIG_HOME/cpl, else ~/.config/cpl.
//   config.json       {"current": "<name>", "contexts": {"<name>": {"url": "..."}}}
//   credentials.json  {"<name>": {"type": "api_key", "key": "..."} | {"type": "oauth", ...}}
// Both are written mode 0600 in a 0700 directory, whole (a temporary file
// renamed over the old one), so a crash never leaves half a file.
// CPL_URL with CPL_API_KEY stand for a context of their own (CI, scripts).

export interface Context {
  url: string;
}

export interface Config {
  current: string | null;
  contexts: Record<string, Context>;
}

export type Credential =
  | { type: "api_key"; key: string }
  | {
      type: "oauth";
      client_id: string;
      token_endpoint: string;
      revocation_endpoint: string | null;
      access_token: string;
      refresh_token: string | null;
      /** Epoch milliseconds. */
      expires_at: number | null;
      scope: string | null;
    };

export type Env = Record<string, string | undefined>;

export function configDir(env: Env): string {
  if (env.CPL_CONFIG_DIR) return env.CPL_CONFIG_DIR;
  const base = env.XDG_CONFIG_HOME && path.isAbsolute(env.XDG_CONFIG_HOME) ? env.XDG_CONFIG_HOME : path.join(env.HOME ?? homedir(), ".config");
  return path.join(base, "cpl");
}

function readJson<T>(file: string, empty: T): T {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return empty;
    throw err;
  }
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new CliError(`${file} is not valid JSON: fix or delete it`);
  }
}

function writeJson(file: string, value: unknown): void {
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(value, null, 2) + "\n", { mode: 0o600 });
  // The mode of an existing temporary name (a crash's leftover) is not reset by writeFileSync.
  chmodSync(tmp, 0o600);
  renameSync(tmp, file);
}

export class Store {
  readonly dir: string;
  constructor(env: Env) {
    this.dir = configDir(env);
  }
  get configFile(): string {
    return path.join(this.dir, "config.json");
  }
  get credentialsFile(): string {
    return path.join(this.dir, "credentials.json");
  }
  readConfig(): Config {
    const c = readJson<Partial<Config>>(this.configFile, {});
    return { current: c.current ?? null, contexts: c.contexts ?? {} };
  }
  writeConfig(c: Config): void {
    writeJson(this.configFile, c);
  }
  readCredentials(): Record<string, Credential> {
    return readJson<Record<string, Credential>>(this.credentialsFile, {});
  }
  credential(name: string): Credential | null {
    return this.readCredentials()[name] ?? null;
  }
  setCredential(name: string, credential: Credential | null): void {
    const all = this.readCredentials();
    if (credential) all[name] = credential;
    else delete all[name];
    writeJson(this.credentialsFile, all);
  }
}

export interface Target {
  /** The context's name ("env" for CPL_URL). */
  name: string;
  url: string;
  credential: Credential | null;
}

/** The server a command talks to: --context, else CPL_CONTEXT, else CPL_URL (with CPL_API_KEY), else the current context. */
export function resolveTarget(store: Store, env: Env, contextOption: string | undefined): Target {
  const wanted = contextOption ?? env.CPL_CONTEXT;
  if (!wanted && env.CPL_URL) {
    return { name: "env", url: trimUrl(env.CPL_URL), credential: env.CPL_API_KEY ? { type: "api_key", key: env.CPL_API_KEY } : null };
  }
  const config = store.readConfig();
  const name = wanted ?? config.current;
  if (!name) throw new CliError("not signed in to any server: run `cpl login <url>` (or set CPL_URL and CPL_API_KEY)", EXIT.auth);
  const context = config.contexts[name];
  if (!context) {
    const known = Object.keys(config.contexts);
    throw new CliError(`no context named ${JSON.stringify(name)}${known.length ? ` (known: ${known.join(", ")})` : ""}`, EXIT.usage);
  }
  const credential = env.CPL_API_KEY ? { type: "api_key" as const, key: env.CPL_API_KEY } : store.credential(name);
  return { name, url: context.url, credential };
}

/** A base URL without its trailing slashes, checked. */
export function trimUrl(raw: string): string {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new CliError(`not a URL: ${JSON.stringify(raw)} (give it with http:// or https://)`, EXIT.usage);
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") throw new CliError(`not an http(s) URL: ${raw}`, EXIT.usage);
  return `${u.origin}${u.pathname}`.replace(/\/+$/, "");
}
