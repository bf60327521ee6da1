import { parseArgs } from "node:util";
import { FrameWriter } from "@codeplane/frames";

export { ANALYZER_NODE_FLAGS } from "./node-flags.ts";

// `codeplane analyze <dir>`: the analysis Job's main container. With --frames
// (how the Job runs it) progress lines and the result go to stdout as log
// frames, so the controller gets the result from the pod log on any cluster
// (no shared volume, no write access to the API); without it, the result is
// printed as JSON for a person at a terminal.
//
// The package's second entry (@codeplane/analyzer/cli), what bin/codeplane.mjs
// launches: importing it is cheap (the parsers load on the first analysis), so
// the launcher can read ANALYZER_NODE_FLAGS and restart node with them first.

export const ANALYZE_USAGE = "codeplane analyze <dir> [--language en|ja] [--time-budget-seconds N] [--threads 1|2] [--frames]";

export async function analyzeCommand(args: string[], out: NodeJS.WritableStream = process.stdout): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args,
      allowPositionals: true,
      strict: true,
      options: {
        language: { type: "string", default: "en" },
        frames: { type: "boolean", default: false },
        "time-budget-seconds": { type: "string" },
        threads: { type: "string" },
      },
    });
  } catch (err) {
    process.stderr.write(`codeplane analyze: ${err instanceof Error ? err.message : String(err)}\nusage: ${ANALYZE_USAGE}\n`);
    return 2;
  }
  const { values, positionals } = parsed;
  const language = values.language;
  const budget = values["time-budget-seconds"] === undefined ? undefined : Number(values["time-budget-seconds"]);
  const threads = values.threads;
  if (
    positionals.length !== 1 ||
    (language !== "en" && language !== "ja") ||
    (budget !== undefined && !(budget > 0)) ||
    (threads !== undefined && threads !== "1" && threads !== "2")
  ) {
    process.stderr.write(`usage: ${ANALYZE_USAGE}\n`);
    return 2;
  }
  const frames = values.frames ? new FrameWriter((c) => out.write(c)) : null;
  const say = (message: string) => (frames ? frames.line("stdout", message) : process.stderr.write(`${message}\n`));
  try {
    const { analyzeRepository } = await import("./analyze.ts");
    const result = await analyzeRepository(positionals[0]!, {
      language,
      ...(budget !== undefined && { timeBudgetMs: budget * 1000 }),
      ...(threads !== undefined && { parallel: threads === "2" }),
      onProgress: say,
    });
    if (frames) {
      frames.result(JSON.stringify(result));
      frames.exit(0);
    } else out.write(`${JSON.stringify(result, null, 2)}\n`);
    return 0;
  } catch (err) {
    const message = `analysis failed: ${err instanceof Error ? err.message : String(err)}`;
    if (frames) {
      frames.line("stderr", message);
      frames.exit(1);
    } else process.stderr.write(`${message}\n`);
    return 1;
  }
}
