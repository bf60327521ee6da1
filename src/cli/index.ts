import type { Config } from "../config.ts";
import { VERSION } from "../version.ts";
import type { CommandGroup } from "./command.ts";

// The codeplane command line. Each command group is its own module, imported
// only when it runs: help, version, a usage error and `keys generate` load
// neither the configuration nor the service, and `analyze` (what analysis
// pods run) loads only the analyzer.

const USAGE = `codeplane ${VERSION}

Usage:
  codeplane serve                      serve the API (configuration from the environment; see docs/operators/configuration.md)
  codeplane migrate                    apply database migrations and exit
  codeplane accounts create <name>     create an account; prints JSON
  codeplane accounts limits <name> [--executing N|default] [--waiting N|default] [--cpu Q|default] [--memory Q|default]
                                       show or override an account's limits (0: none; default: the operator's); prints JSON
  codeplane keys create --account <name> --name <key name> [--scopes s1,s2] [--expires-at RFC3339]
                                       create an API key; prints JSON with the key (shown once)
  codeplane keys generate              print a new, valid API key (offline, stored nowhere: for CODEPLANE_BOOTSTRAP_API_KEY)
  codeplane secrets reencrypt          re-encrypt stored values under the current encryption key
  codeplane install                    apply the CRDs, CODEPLANE_NAMESPACE (restricted) and the workload NetworkPolicy in the KUBECONFIG cluster (development; Helm does this in production)
  codeplane analyze <dir> [--language en|ja] [--frames]
                                       analyse a checkout (what analysis Jobs run); prints the result as JSON
  codeplane version                    print the version
`;

/** The commands that need the configuration, each group's module loaded when it runs. */
const GROUPS: Record<string, () => Promise<{ run: CommandGroup }>> = {
  serve: () => import("./serve.ts"),
  migrate: () => import("./migrate.ts"),
  accounts: () => import("./accounts.ts"),
  keys: () => import("./keys.ts"),
  install: () => import("./install.ts"),
  secrets: () => import("./secrets.ts"),
};

/** Commands that need no configuration; undefined when `command` is not one of them. */
async function standalone(argv: string[]): Promise<number | undefined> {
  const [command, sub, ...rest] = argv;
  if (!command || command === "help" || command === "--help" || command === "-h") {
    process.stdout.write(USAGE);
    return command ? 0 : 2;
  }
  if (command === "analyze") {
    // Runs in analysis Jobs: needs no configuration, database or cluster.
    const { analyzeCommand } = await import("@codeplane/analyzer/cli");
    return analyzeCommand(argv.slice(1));
  }
  if (command === "version" || command === "--version") {
    process.stdout.write(`${VERSION}\n`);
    return 0;
  }
  if (command === "keys" && sub === "generate") return (await import("./keys.ts")).generate(rest);
  return undefined;
}

/** The configuration from the environment, or the exit code after saying what is wrong with it. */
async function configFrom(env: Record<string, string | undefined>): Promise<Readonly<Config> | number> {
  const { ConfigError, loadConfig } = await import("../config.ts");
  try {
    return loadConfig(env);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`codeplane: ${err.message}\n`);
    return 2;
  }
}

export async function runCli(argv: string[], env: Record<string, string | undefined>): Promise<number> {
  const done = await standalone(argv);
  if (done !== undefined) return done;
  const [command, sub, ...rest] = argv;
  const load = Object.hasOwn(GROUPS, command!) ? GROUPS[command!] : undefined;
  if (!load) {
    process.stderr.write(USAGE);
    return 2;
  }
  const config = await configFrom(env);
  if (typeof config === "number") return config;
  const { createRootLogger } = await import("../logger.ts");
  // CLI commands print JSON on stdout; their logs go to stderr so the two never mix.
  const logger = createRootLogger(config.logLevel, command === "serve" ? undefined : process.stderr);
  const print = (v: unknown) => process.stdout.write(JSON.stringify(v, null, 2) + "\n");
  let result;
  try {
    result = await (await load()).run({ sub, rest, config, logger, print });
  } catch (err) {
    const code = (await import("./errors.ts")).exitCodeFor(err);
    if (code === null) throw err;
    return code;
  }
  if (result !== "usage") return result;
  process.stderr.write(USAGE);
  return 2;
}
