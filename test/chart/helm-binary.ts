import { execFile as execFileCb } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";

// The Helm the chart tests render with: built from the Go module proxy and
// cached by hack/tools/helm.sh (a no-op after the first build).

const root = new URL("../..", import.meta.url).pathname;

/** The path of the pinned Helm binary, building it first if the cache has none. */
export async function helmBinary(): Promise<string> {
  const { stdout } = await promisify(execFileCb)(path.join(root, "hack/tools/helm.sh"), [], { maxBuffer: 16 * 1024 * 1024 });
  return stdout.trim().split("\n").pop()!;
}
