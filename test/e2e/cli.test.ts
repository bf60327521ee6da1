import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { until } from "../helpers/cluster.ts";
import { cpl, cplEnv, spawnCpl, type CplResult } from "../helpers/cpl.ts";
import { startE2E, type E2E } from "../helpers/e2e.ts";

// The user CLI against a real cluster, as a person types it: `cpl run <repo>
// --follow -- python3 ...` shows the output while the run is still running,
// stdout on stdout and stderr on stderr (escape sequences kept), and the shell
// gets the run's exit code; the same for an analysed experiment with -p.

const TRAIN = `import argparse
import sys

parser = argparse.ArgumentParser(description="Pretends to train.")
parser.add_argument("--lr", type=float, default=0.01, help="learning rate")
parser.add_argument("--code", type=int, default=0, help="exit with this")
args = parser.parse_args()
print(f"lr={args.lr}", flush=True)
print("\\x1b[33mwarming up\\x1b[0m", file=sys.stderr, flush=True)
sys.exit(args.code)
`;

/** The local cluster's drop of a new pod's first connections to the node (see the contract): the cluster's failure, tried again. */
const CLUSTER_DROP = /Failed to connect to 10\.244\.0\.1/;

let e: E2E;
let env: Record<string, string>;

beforeAll(async () => {
  e = await startE2E("cp-e2e-cli", {
    env: { CODEPLANE_LOG_LEVEL: "info" },
    prepare: async (f) => void (await f.commit("main", { "train.py": TRAIN, "README.md": "# Trainer\n\nRun `python3 train.py --lr 0.1`.\n" })),
  });
  env = cplEnv({ url: e.svc.url, key: e.alice.key });
}, 300_000);
afterAll(() => e?.close());

/** `cpl run ... --follow`, once more when the cluster's drop caught the checkout. */
async function follow(args: string[], onStdout?: (p: ReturnType<typeof spawnCpl>) => Promise<void>): Promise<CplResult> {
  for (let attempt = 1; ; attempt++) {
    const p = spawnCpl(args, env);
    const watched = onStdout?.(p);
    const result = await p.done;
    if (result.code === 125 && CLUSTER_DROP.test(result.stderr) && attempt < 3) continue;
    await watched;
    return result;
  }
}

describe("cpl against a real cluster", () => {
  it("run --follow -- python3 ...: output live, stderr apart with its colours, and the run's exit code", async () => {
    const program = [
      "import sys, time",
      "print('first', flush=True)",
      "print('\\x1b[31mred on stderr\\x1b[0m', file=sys.stderr, flush=True)",
      "time.sleep(12)",
      "print('second', flush=True)",
      "sys.exit(3)",
    ].join("\n");
    let statusWhenFirstSeen: string | undefined;
    let stdoutWhenFirstSeen: string | undefined;
    const result = await follow(["run", "fixture", "--follow", "--", "python3", "-c", program], async (p) => {
      // Live: the first line is on the terminal while the run is still going.
      await until("the first line on cpl's stdout", 600_000, () => p.stdout.includes("first\n") || p.proc.exitCode !== null);
      if (p.proc.exitCode !== null) return;
      stdoutWhenFirstSeen = p.stdout;
      const runs = (await (await e.alice.api("/v1/runs?limit=1")).json()) as { items: { status: string }[] };
      statusWhenFirstSeen = runs.items[0]!.status;
    });
    expect(result.stderr).toContain("\x1b[31mred on stderr\x1b[0m\n");
    expect(result.stdout).toBe("first\nsecond\n");
    // Seen while the program still slept: before its second line, with the run not over (its
    // row may still say preprocessing: the status mirror can lag behind the live log).
    expect(stdoutWhenFirstSeen).toBe("first\n");
    expect(["pending", "preprocessing", "running"]).toContain(statusWhenFirstSeen);
    expect(result.code).toBe(3);

    // The same output again afterwards, and the same exit code from logs -f.
    const runId = ((await (await e.alice.api("/v1/runs?limit=1")).json()) as { items: { run_id: string }[] }).items[0]!.run_id;
    const again = await cpl(["logs", runId, "--follow"], env);
    expect(again).toEqual({ code: 3, stdout: "first\nsecond\n", stderr: "\x1b[31mred on stderr\x1b[0m\n" });
  }, 900_000);

  it("analyze --wait prints the experiments with their parameters; run --experiment -p --follow exits with the run's code", async () => {
    let analysis: CplResult;
    for (let attempt = 1; ; attempt++) {
      analysis = await cpl(["analyze", "fixture", "--wait"], env);
      if (analysis.code !== 0 && CLUSTER_DROP.test(analysis.stderr) && attempt < 3) {
        const { commit_hash } = (await (await e.alice.api(`/v1/repositories/${e.repoId}/analysis`)).json()).items[0];
        await e.alice.api(`/v1/repositories/${e.repoId}/analysis/${commit_hash}`, { method: "DELETE" });
        continue;
      }
      break;
    }
    expect(analysis.code, analysis.stderr).toBe(0);
    expect(analysis.stdout).toContain("python:train.py");
    expect(analysis.stdout).toMatch(/\$ python3 train\.py/);
    expect(analysis.stdout).toMatch(/lr\s+0\.01\s+number\s+--lr/);
    expect(analysis.stdout).toMatch(/code\s+0\s+integer\s+--code/);

    const json = await cpl(["analyze", "fixture", "-o", "json"], env);
    expect(JSON.parse(json.stdout)).toMatchObject({
      status: "completed",
      experiments: expect.arrayContaining([expect.objectContaining({ id: "python:train.py" })]),
    });

    const failed = await follow(["run", "fixture", "main", "--experiment", "python:train.py", "-p", "lr=0.5", "-p", "code=4", "--follow"]);
    expect(failed.stdout).toBe("lr=0.5\n");
    expect(failed.stderr).toContain("\x1b[33mwarming up\x1b[0m\n");
    expect(failed.code).toBe(4);

    const ok = await follow(["run", "fixture", "-e", "python:train.py", "-p", "lr=0.25", "-f"]);
    expect(ok).toMatchObject({ code: 0, stdout: "lr=0.25\n" });

    // A parameter the experiment does not have: the API's 422, readably, and exit 1.
    const bad = await cpl(["run", "fixture", "-e", "python:train.py", "-p", "nope=1"], env);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/422 invalid request:\n {2}\S.*nope/);
  }, 1_200_000);
});
