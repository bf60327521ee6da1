import { parentPort, workerData } from "node:worker_threads";
import { FileReader } from "./files.ts";
import { analyzerContext, runDetectors, type WorkerMessage, type WorkerTask } from "./run-detectors.ts";
import { Syntax } from "./syntax.ts";

// A worker thread running some of the detectors, so a large repository is
// parsed on two cores at once. It reads the files itself (nothing large
// crosses threads) and sends back only the detectors' outputs.

const task = workerData as WorkerTask;
const post = (m: WorkerMessage) => parentPort!.postMessage(m);
try {
  const reader = new FileReader(task.root, task.limits);
  const syntax = await Syntax.load();
  const ctx = analyzerContext(task.root, task.files, reader, syntax, task.deadline);
  const outputs = runDetectors(ctx, new Set(task.names), (message) => post({ kind: "progress", message }));
  post({ kind: "done", outputs, refusals: reader.refusals(), budgetExhausted: reader.budgetExhausted, timedOut: ctx.timedOut(), parsed: syntax.parsed, unparsable: syntax.unparsable });
} catch (err) {
  post({ kind: "error", message: err instanceof Error ? err.message : String(err) });
}
