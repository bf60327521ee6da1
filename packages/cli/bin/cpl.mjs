#!/usr/bin/env node
// cpl: the user command line (packages/cli). Node 24 strips the sources'
// types; the compile cache keeps the stripped and compiled modules (in the
// system's temporary directory, or $NODE_COMPILE_CACHE), so only the first
// start pays for stripping: about 0.1 s after that instead of 0.3-0.4 s
// (bench/startup.ts). Only node:* and the command that runs are loaded
// (src/main.ts).
import { enableCompileCache } from "node:module";

enableCompileCache?.();
const { main } = await import("../src/main.ts");
process.exitCode = await main(process.argv.slice(2));
