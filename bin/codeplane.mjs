#!/usr/bin/env node
// Runs the compiled CLI when the package was built (npm pack, container
// images), and the TypeScript source directly otherwise: Node 24 strips types.
import { existsSync } from "node:fs";

const compiled = new URL("../dist/main.js", import.meta.url);
const entry = existsSync(compiled) ? compiled : new URL("../src/main.ts", import.meta.url);
const { runCli } = await import(entry.href);
process.exitCode = await runCli(process.argv.slice(2), process.env);
