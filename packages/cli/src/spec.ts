import type { OptionSpec } from "./args.ts";

// Every command cpl has, as data: its words, arguments, options and the
// module that runs it (imported only when it runs, so `cpl --help` or a usage
// error loads nothing else). Help, parsing and shell completion read this table.

export interface CommandSpec {
  /** The words that name it: ["runs", "ls"]. */
  words: readonly string[];
  /** Its arguments as shown in help: "<repo> [ref]". */
  args: string;
  /** How many positional arguments it takes. */
  min: number;
  max: number;
  summary: string;
  options: readonly OptionSpec[];
  /** Takes a command after `--`. */
  passthrough?: boolean;
  /** The module (src/commands/<module>.ts) and its export that runs it. */
  module: "auth" | "repos" | "files" | "analyze" | "runs" | "env" | "keys" | "completion";
  handler: string;
}

export const GLOBAL_OPTIONS: readonly OptionSpec[] = [
  { name: "output", short: "o", value: "FORMAT", choices: ["table", "json"], help: "table (default) or json" },
  { name: "context", value: "NAME", help: "the server to talk to (default: the current context; env CPL_CONTEXT)" },
  { name: "help", short: "h", help: "show help" },
];

const limit: OptionSpec = { name: "limit", value: "N", help: "at most N items (default: all)" };
const ref: OptionSpec = { name: "ref", short: "r", value: "REF", help: "branch, tag or commit (default: the repository's default branch)" };
const repoOpt: OptionSpec = { name: "repo", value: "REPO", help: "only this repository (name or id)" };

export const COMMANDS: readonly CommandSpec[] = [
  {
    words: ["login"],
    args: "<url>",
    min: 1,
    max: 1,
    summary: "sign in to a server: in the browser (OAuth, the default) or with an API key",
    options: [
      { name: "name", value: "NAME", help: "the context's name (default: the URL's host)" },
      { name: "api-key-stdin", help: "read an API key from stdin instead of signing in in the browser" },
      { name: "no-browser", help: "print the sign-in URL instead of opening a browser" },
      { name: "scopes", value: "LIST", help: "OAuth scopes to ask for, comma-separated (default: all)" },
    ],
    module: "auth",
    handler: "login",
  },
  {
    words: ["logout"],
    args: "",
    min: 0,
    max: 0,
    summary: "forget the current context's credential (an OAuth token is revoked)",
    options: [],
    module: "auth",
    handler: "logout",
  },
  { words: ["contexts", "ls"], args: "", min: 0, max: 0, summary: "list the servers signed in to", options: [], module: "auth", handler: "contextsList" },
  {
    words: ["contexts", "use"],
    args: "<name>",
    min: 1,
    max: 1,
    summary: "make a context the current one",
    options: [],
    module: "auth",
    handler: "contextsUse",
  },
  {
    words: ["contexts", "rm"],
    args: "<name>",
    min: 1,
    max: 1,
    summary: "remove a context and its credential",
    options: [],
    module: "auth",
    handler: "contextsRemove",
  },
  {
    words: ["repos", "add"],
    args: "<url>",
    min: 1,
    max: 1,
    summary: "register a repository by its clone URL",
    options: [
      { name: "name", value: "NAME", help: "its name (default: the URL's last segment)" },
      { name: "default-branch", value: "BRANCH", help: "default: the remote's HEAD" },
    ],
    module: "repos",
    handler: "add",
  },
  { words: ["repos", "ls"], args: "", min: 0, max: 0, summary: "list repositories", options: [limit], module: "repos", handler: "list" },
  { words: ["repos", "get"], args: "<repo>", min: 1, max: 1, summary: "show a repository (by name or id)", options: [], module: "repos", handler: "get" },
  {
    words: ["files", "ls"],
    args: "<repo> [path]",
    min: 1,
    max: 2,
    summary: "list a directory at a ref",
    options: [ref, limit],
    module: "files",
    handler: "list",
  },
  { words: ["files", "cat"], args: "<repo> <path>", min: 2, max: 2, summary: "print a file at a ref", options: [ref], module: "files", handler: "cat" },
  {
    words: ["analyze"],
    args: "<repo> [ref]",
    min: 1,
    max: 2,
    summary: "analyse a commit: what can be run, with which parameters",
    options: [
      { name: "wait", short: "w", help: "wait until the analysis has finished" },
      { name: "language", value: "LANG", choices: ["en", "ja"], help: "the summary's language" },
    ],
    module: "analyze",
    handler: "analyze",
  },
  {
    words: ["run"],
    args: "<repo> [ref] [-- command ...]",
    min: 1,
    max: 2,
    summary: "start a run: an analysed experiment, or a command",
    passthrough: true,
    options: [
      { name: "experiment", short: "e", value: "ID", help: "an experiment id from the commit's analysis (cpl analyze)" },
      { name: "param", short: "p", value: "KEY=VALUE", repeat: true, help: "an experiment parameter (repeatable)" },
      { name: "follow", short: "f", help: "stream its output live and exit with its exit code" },
      { name: "compute", value: "TYPE", help: "a compute preset (default: the server's)" },
      { name: "timeout", value: "SECONDS", help: "stop it after this long" },
      { name: "environment", value: "MODE", choices: ["auto", "none"], help: "auto (install what the analysis found) or none" },
      { name: "retries", value: "N", help: "start it again up to N times (0-5) if the cluster loses its pod" },
    ],
    module: "runs",
    handler: "run",
  },
  {
    words: ["runs", "ls"],
    args: "",
    min: 0,
    max: 0,
    summary: "list runs, newest first",
    options: [
      repoOpt,
      {
        name: "status",
        value: "STATUS",
        choices: ["pending", "preprocessing", "running", "completed", "failed", "cancelled"],
        help: "only runs in this status",
      },
      { ...limit, help: "at most N runs (default 20)" },
    ],
    module: "runs",
    handler: "list",
  },
  { words: ["runs", "get"], args: "<run>", min: 1, max: 1, summary: "show a run", options: [], module: "runs", handler: "get" },
  { words: ["runs", "cancel"], args: "<run>", min: 1, max: 1, summary: "cancel a run", options: [], module: "runs", handler: "cancel" },
  {
    words: ["logs"],
    args: "<run>",
    min: 1,
    max: 1,
    summary: "print a run's output (stdout to stdout, stderr to stderr)",
    options: [{ name: "follow", short: "f", help: "stream it live (resuming after a dropped connection) and exit with the run's exit code" }],
    module: "runs",
    handler: "logs",
  },
  {
    words: ["env", "set"],
    args: "<NAME> [value]",
    min: 1,
    max: 2,
    summary: "set a variable runs get (value from stdin when omitted); replaces one of the same name",
    options: [repoOpt, { name: "plain", help: "not secret: its value can be read back" }],
    module: "env",
    handler: "set",
  },
  {
    words: ["env", "ls"],
    args: "",
    min: 0,
    max: 0,
    summary: "list variables (secret values are never shown)",
    options: [repoOpt, limit],
    module: "env",
    handler: "list",
  },
  { words: ["env", "rm"], args: "<NAME>", min: 1, max: 1, summary: "delete a variable", options: [repoOpt], module: "env", handler: "remove" },
  {
    words: ["keys", "create"],
    args: "<name>",
    min: 1,
    max: 1,
    summary: "create an API key (printed once)",
    options: [
      { name: "scopes", value: "LIST", help: "comma-separated (default: every scope you have)" },
      { name: "expires-at", value: "TIME", help: "RFC 3339" },
    ],
    module: "keys",
    handler: "create",
  },
  { words: ["keys", "ls"], args: "", min: 0, max: 0, summary: "list API keys", options: [limit], module: "keys", handler: "list" },
  { words: ["keys", "revoke"], args: "<id>", min: 1, max: 1, summary: "revoke an API key (by id or prefix)", options: [], module: "keys", handler: "revoke" },
  {
    words: ["completion"],
    args: "<bash|zsh>",
    min: 1,
    max: 1,
    summary: "print a shell completion script",
    options: [],
    module: "completion",
    handler: "completion",
  },
];

/** The command the words at the start of argv name, and how many words that took. */
export function findCommand(argv: readonly string[]): { command: CommandSpec; used: number } | { group: string } | null {
  const words = argv.slice(0, 2);
  const two = COMMANDS.find((c) => c.words.length === 2 && c.words[0] === words[0] && c.words[1] === words[1]);
  if (two) return { command: two, used: 2 };
  const one = COMMANDS.find((c) => c.words.length === 1 && c.words[0] === words[0]);
  if (one) return { command: one, used: 1 };
  if (words[0] && COMMANDS.some((c) => c.words[0] === words[0])) return { group: words[0] };
  return null;
}

const pad = (s: string, n: number) => s + " ".repeat(Math.max(1, n - s.length));

function optionLines(options: readonly OptionSpec[]): string[] {
  return options.map((o) => {
    const left = `${o.short ? `-${o.short}, ` : "    "}--${o.name}${o.value ? ` ${o.value}` : ""}`;
    return `  ${pad(left, 30)}${o.help}`;
  });
}

export function commandHelp(c: CommandSpec): string {
  return [
    `Usage: cpl ${c.words.join(" ")}${c.args ? ` ${c.args}` : ""} [options]`,
    "",
    c.summary,
    "",
    "Options:",
    ...optionLines([...c.options, ...GLOBAL_OPTIONS]),
    "",
  ].join("\n");
}

export function mainHelp(group?: string): string {
  const list = COMMANDS.filter((c) => !group || c.words[0] === group);
  const width = Math.max(...list.map((c) => `${c.words.join(" ")} ${c.args}`.length)) + 2;
  return [
    "cpl: the codeplane command line",
    "",
    "Usage: cpl <command> [args] [options]",
    "",
    "Commands:",
    ...list.map((c) => `  ${pad(`${c.words.join(" ")} ${c.args}`.trimEnd(), width)}${c.summary}`),
    "",
    "Options for every command:",
    ...optionLines(GLOBAL_OPTIONS),
    "",
    "cpl <command> --help shows a command's options. Exit codes: 0 done, 1 the server refused or failed,",
    "2 bad arguments, 3 not signed in or not allowed, 4 not found; run --follow and logs -f exit",
    "with the run's exit code (125 when it ended without one). Docs: docs/users/cli.md",
    "",
  ].join("\n");
}
