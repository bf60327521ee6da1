import { createHash } from "node:crypto";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { until } from "../helpers/cluster.ts";
import { startE2E, type E2E } from "../helpers/e2e.ts";
import { startS3Server, type S3Server } from "../helpers/s3-server.ts";
import type { Tenant } from "../helpers/service.ts";

// Output files end to end on the local cluster, stored in a real S3 server
// (versitygw on this machine; pods never reach it, they send their files to
// codeplane's internal door): a run writes a PNG, a CSV and a 50 MiB file,
// which list and download with matching SHA-256s; a run cancelled half-way
// and one that runs out of time still list what they wrote; a file over the
// run's limit is refused with a line in the run and nothing of it listed.

const MiB = 1024 * 1024;
const PNG = Buffer.from(
  "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8cfc0f01f0005000201e221bc330000000049454e44ae426082",
  "hex",
);
const CSV = "step,loss\n1,0.9\n2,0.5\n3,0.25\n";
// What write.py writes: MiB n of the big file is byte n % 251, so the test knows its hash.
const bigSha = (mib: number) => {
  const h = createHash("sha256");
  for (let i = 0; i < mib; i++) h.update(Buffer.alloc(MiB, i % 251));
  return h.digest("hex");
};
const sha = (b: Buffer | string) => createHash("sha256").update(b).digest("hex");

const WRITE = `import os, sys, time, pathlib
out = pathlib.Path(os.environ["CODEPLANE_OUTPUT_DIR"])
mode = sys.argv[1]
def big(name, mib):
    with open(out / name, "wb") as f:
        for i in range(mib):
            f.write(bytes([i % 251]) * 1048576)
if mode == "full":
    (out / "plots").mkdir()
    (out / "plots" / "loss.png").write_bytes(bytes.fromhex("${PNG.toString("hex")}"))
    (out / "scores.csv").write_text(${JSON.stringify(CSV)})
    big("model.bin", 50)
    print("wrote everything", flush=True)
elif mode == "half":
    (out / "half.csv").write_text("step,loss\\n1,0.9\\n")
    print("halfway", flush=True)
    time.sleep(600)
elif mode == "slow":
    (out / "early.txt").write_text("before the timeout\\n")
    print("sleeping", flush=True)
    time.sleep(600)
elif mode == "over":
    (out / "ok.txt").write_text("kept\\n")
    big("too-big.bin", 70)
`;

let e: E2E;
let s3: S3Server;
let alice: Tenant;

beforeAll(async () => {
  s3 = await startS3Server();
  e = await startE2E("cp-e2e-outputs", {
    env: {
      CODEPLANE_LOG_LEVEL: "info",
      CODEPLANE_OBJECT_STORE: "s3",
      CODEPLANE_S3_ENDPOINT: s3.endpoint,
      CODEPLANE_S3_BUCKET: s3.bucket,
      CODEPLANE_S3_REGION: s3.region,
      CODEPLANE_S3_FORCE_PATH_STYLE: "true",
      CODEPLANE_S3_ACCESS_KEY_ID: s3.accessKeyId,
      CODEPLANE_S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
      CODEPLANE_OUTPUT_MAX_RUN_BYTES: String(60 * MiB),
      CODEPLANE_RUN_OUTPUT_COLLECT_SECONDS: "90",
    },
    prepare: async (f) => void (await f.commit("main", { "write.py": WRITE })),
  });
  alice = e.alice;
}, 1_200_000);
afterAll(async () => {
  await e?.close();
  await s3?.stop();
});

async function start(args: string[], extra: Record<string, unknown> = {}): Promise<string> {
  const res = await alice.api(`/v1/repositories/${e.repoId}/main/runs`, { method: "POST", json: { command: ["python3", "write.py", ...args], ...extra } });
  expect(res.status, await res.clone().text()).toBe(201);
  return ((await res.json()) as { run_id: string }).run_id;
}

const get = async (p: string) => (await alice.api(p)).json();
type Listing = { items: { path: string; size: number; sha256: string; content_type: string }[]; refused: { path: string; reason: string }[] };
const outputsOf = (id: string) => get(`/v1/runs/${id}/outputs`) as Promise<Listing>;

async function ended(id: string, timeoutMs = 600_000) {
  return until(`run ${id} to end`, timeoutMs, async () => {
    const run = await get(`/v1/runs/${id}`);
    return ["completed", "failed", "cancelled"].includes(run.status) ? run : undefined;
  });
}

/** The run's stdout or stderr so far (a running run's too). */
const log = async (id: string, stream: "stdout" | "stderr") => ((await get(`/v1/runs/${id}/logs/${stream}`)) as { content: string }).content;

describe("output files on a real cluster", () => {
  let full: string;
  let half: string;
  let slow: string;
  let over: string;

  beforeAll(async () => {
    // Side by side: the cluster is slow, and they are independent.
    [full, half, slow, over] = await Promise.all([start(["full"]), start(["half"]), start(["slow"], { timeout_seconds: 45 }), start(["over"])]);
  });

  it("lists a PNG, a CSV and a 50 MiB file a run wrote, and downloads each with its SHA-256", async () => {
    const run = await ended(full);
    expect(run, JSON.stringify(run)).toMatchObject({ status: "completed", exit_code: 0 });
    const listed = await until("the outputs to be listed", 60_000, async () => {
      const l = await outputsOf(full);
      return l.items.length === 3 ? l : undefined;
    });
    expect(listed).toEqual({
      items: [
        { path: "model.bin", size: 50 * MiB, sha256: bigSha(50), content_type: "application/octet-stream" },
        { path: "plots/loss.png", size: PNG.length, sha256: sha(PNG), content_type: "image/png" },
        { path: "scores.csv", size: Buffer.byteLength(CSV), sha256: sha(CSV), content_type: "text/csv; charset=utf-8" },
      ],
      refused: [],
    });
    const png = await alice.api(`/v1/runs/${full}/outputs/plots/loss.png`);
    expect(png.headers.get("content-type")).toBe("image/png");
    expect(sha(Buffer.from(await png.arrayBuffer()))).toBe(sha(PNG));
    expect(await (await alice.api(`/v1/runs/${full}/outputs/scores.csv`)).text()).toBe(CSV);
    const model = await alice.api(`/v1/runs/${full}/outputs/model.bin`);
    const h = createHash("sha256");
    for await (const c of model.body as unknown as AsyncIterable<Uint8Array>) h.update(c);
    expect(h.digest("hex")).toBe(bigSha(50));
    const range = await alice.api(`/v1/runs/${full}/outputs/model.bin`, { headers: { range: `bytes=${3 * MiB}-${3 * MiB + 9}` } });
    expect(range.status).toBe(206);
    expect(Buffer.from(await range.arrayBuffer())).toEqual(Buffer.alloc(10, 3));
    // The archive of all three.
    const dir = mkdtempSync(path.join(tmpdir(), "cp-e2e-outputs-"));
    try {
      writeFileSync(path.join(dir, "all.tar.gz"), Buffer.from(await (await alice.api(`/v1/runs/${full}/outputs.tar.gz`)).arrayBuffer()));
      mkdirSync(path.join(dir, "x"));
      execFileSync("tar", ["-xzf", path.join(dir, "all.tar.gz"), "-C", path.join(dir, "x")]);
      expect(sha(readFileSync(path.join(dir, "x/plots/loss.png")))).toBe(sha(PNG));
      expect(sha(readFileSync(path.join(dir, "x/model.bin")))).toBe(bigSha(50));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    expect(await log(full, "stderr")).toContain("codeplane: sent 3 output files (50.0 MiB)");
  }, 900_000);

  it("still lists what a run wrote before it was cancelled half-way", async () => {
    await until("the run to be half-way", 600_000, async () => (await log(half, "stdout")).includes("halfway"));
    expect((await alice.api(`/v1/runs/${half}/cancel`, { method: "POST" })).status).toBe(202);
    expect((await ended(half)).status).toBe("cancelled");
    const listed = await until("the cancelled run's outputs", 120_000, async () => {
      const l = await outputsOf(half);
      return l.items.length > 0 ? l : undefined;
    });
    expect(listed.items).toEqual([
      { path: "half.csv", size: Buffer.byteLength("step,loss\n1,0.9\n"), sha256: sha("step,loss\n1,0.9\n"), content_type: "text/csv; charset=utf-8" },
    ]);
  }, 900_000);

  it("still lists what a run wrote before it timed out", async () => {
    const run = await ended(slow);
    expect(run).toMatchObject({ status: "failed", error: "timed out after 45s" });
    const listed = await until("the timed-out run's outputs", 60_000, async () => {
      const l = await outputsOf(slow);
      return l.items.length > 0 ? l : undefined;
    });
    expect(listed.items.map((i) => [i.path, i.sha256])).toEqual([["early.txt", sha("before the timeout\n")]]);
  }, 900_000);

  it("refuses a file over the run's limit, with a line in the run, and lists nothing of it", async () => {
    const run = await ended(over);
    expect(run.status).toBe("completed");
    const listed = await until("the outputs and the refusal", 60_000, async () => {
      const l = await outputsOf(over);
      return l.items.length + l.refused.length === 2 ? l : undefined;
    });
    expect(listed.items.map((i) => i.path)).toEqual(["ok.txt"]);
    expect(listed.refused).toEqual([{ path: "too-big.bin", size: 70 * MiB, reason: expect.stringContaining("CODEPLANE_OUTPUT_MAX_RUN_BYTES") as string }]);
    expect((await alice.api(`/v1/runs/${over}/outputs/too-big.bin`)).status).toBe(404);
    await until("the refusal on the run's stderr", 60_000, async () => (await log(over, "stderr")).includes('codeplane: Output "too-big.bin" was not stored'));
  }, 900_000);
});
