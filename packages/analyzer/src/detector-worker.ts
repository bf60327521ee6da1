import { parentPort, workerData } from "node:worker_threads";
import { FileReader } from "./files.ts";
import { analyzerContext, grammarsNeeded, runDetectors, type WorkerMessage, type WorkerTask } from "./run-detectors.ts";
import { Syntax } from "./syntax.ts";

// Some of the detectors, away from the main thread: in a worker thread (so a
// large repository is parsed on two cores at once) or in a child process (for
// a grammar that needs V8 flags of its own; see analyze.ts). It reads the
// files itself (nothing large crosses over) and sends back only the
// detectors' outputs.

async function work(task: WorkerTask, post: (m: WorkerMessage) => void): Promise<void> {
  try {
    const names = new Set(task.names);
    const reader = new FileReader(task.root, task.limits);
    const syntax = await Syntax.load({ timeoutMsPerFile: task.parseTimeoutMs, grammars: grammarsNeeded(task.files, names) });
    const ctx = analyzerContext(task.root, task.files, reader, syntax, task.deadline);
    const outputs = runDetectors(ctx, names, (message) => post({ kind: "progress", message }));
    post({
      kind: "done",
      outputs,
      refusals: reader.refusals(),
      budgetExhausted: reader.budgetExhausted,
      timedOut: ctx.timedOut(),
      parsed: syntax.parsed,
      unparsable: syntax.unparsable,
    });
  } catch (err) {
    post({ kind: "error", message: err instanceof Error ? err.message : String(err) });
  }
}

if (parentPort) {
  const port = parentPort;
  await work(workerData as WorkerTask, (m) => port.postMessage(m));
} else if (process.send) {
  // A child process: the task comes as the first message; the last message sent, it leaves.
  process.once("message", (task: WorkerTask) => {
    const sent: Promise<void>[] = [];
    const post = (m: WorkerMessage) => sent.push(new Promise((resolve) => process.send!(m, undefined, undefined, () => resolve())));
    void work(task, post).then(async () => {
      await Promise.all(sent);
      process.disconnect();
    });
  });
}
