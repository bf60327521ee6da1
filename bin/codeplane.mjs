#!/usr/bin/env node
// Runs the compiled CLI when the package was built (npm pack, container
// images), and the TypeScript source directly otherwise: Node 24 strips types.
// `analyze` (what every analysis pod runs) goes straight to the analyzer: it
// needs none of the service, whose imports cost about a second to load.
// `serve` and `analyze` first give node the V8 flags their memory needs.
import { existsSync } from "node:fs";

const [command, ...rest] = process.argv.slice(2);
const pick = (compiled, source) => {
  const built = new URL(`../dist/${compiled}`, import.meta.url);
  return (existsSync(built) ? built : new URL(`../src/${source}`, import.meta.url)).href;
};
/** Starts this process again, in place (same pid, same stdio), with the node flags it lacks. */
const withNodeFlags = (flags) => {
  const missing = flags.filter((f) => !process.execArgv.includes(f));
  if (missing.length && typeof process.execve === "function") {
    process.execve(process.execPath, [process.execPath, ...process.execArgv, ...missing, ...process.argv.slice(1)]);
  }
};
if (command === "analyze") {
  // The analyzer is a workspace package (packages/analyzer), never compiled:
  // node strips its types. Its memory needs V8 settings only node's command line gives.
  const { ANALYZER_NODE_FLAGS, analyzeCommand } = await import("@codeplane/analyzer/cli");
  withNodeFlags(ANALYZER_NODE_FLAGS);
  process.exitCode = await analyzeCommand(rest);
} else {
  // So does the service's idle memory (src/server-node-flags.ts).
  if (command === "serve") withNodeFlags((await import(pick("server-node-flags.js", "server-node-flags.ts"))).SERVER_NODE_FLAGS);
  const { runCli } = await import(pick("cli/index.js", "cli/index.ts"));
  process.exitCode = await runCli(process.argv.slice(2), process.env);
}
