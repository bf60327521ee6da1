import { assembleResult, FrameSplitter, type ResultPiece } from "@codeplane/frames";
import type { AnalyzerOutput } from "./analysis-observation.ts";

// The analyzer hands its result back through its own log (result frames), so
// it works on any cluster: no shared volume, no API access from the pod.

export function parseAnalyzerOutput(text: string): AnalyzerOutput {
  const splitter = new FrameSplitter({ maxLineLength: 64 * 1024 });
  const pieces: ResultPiece[] = [];
  let lastError: string | null = null;
  for (const f of [...splitter.push(text), ...splitter.end()]) {
    if (f.kind === "result") pieces.push(f.result);
    else if (f.kind === "line" && f.line.stream === "stderr" && f.line.line.trim()) lastError = f.line.line.trim().slice(0, 2000);
  }
  return { document: assembleResult(pieces), lastError };
}
