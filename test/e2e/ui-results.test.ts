import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser } from "../helpers/browser.ts";
import { until } from "../helpers/cluster.ts";
import { startE2E, type E2E } from "../helpers/e2e.ts";

// Results in the dashboard on the local cluster, in Chromium: an analysed
// experiment run twice with different parameters (real Jobs, real pods); each
// prints its metrics and writes a PNG and a CSV to $CODEPLANE_OUTPUT_DIR. Its
// run page plots the metrics and previews the files; the experiment's page
// compares the two runs, in its table and in one plot with a line per run.

// An experiment the analyzer finds, with --lr as a parameter: loss falls faster with a larger lr.
const TRAIN = `"""Trains a toy model and keeps its scores and a plot."""
import argparse
import os
import pathlib
import struct
import zlib


def png(width, height):
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    raw = b"".join(b"\\x00" + b"".join(bytes((x * 255 // width, y * 255 // height, 160)) for x in range(width)) for y in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\\x89PNG\\r\\n\\x1a\\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")


def main():
    parser = argparse.ArgumentParser(description="Trains a toy model.")
    parser.add_argument("--lr", type=float, default=0.1, help="Learning rate.")
    args = parser.parse_args()
    out = pathlib.Path(os.environ["CODEPLANE_OUTPUT_DIR"])
    loss = 1.0
    rows = ["epoch,loss"]
    for epoch in range(4):
        loss = loss * (1 - args.lr)
        print(f"::metric name=loss,step={epoch}::{loss:.4f}", flush=True)
        rows.append(f"{epoch},{loss:.4f}")
    print(f'::metric::{{"step": 3, "metrics": {{"accuracy": {1 - loss:.4f}}}}}', flush=True)
    (out / "scores.csv").write_text("\\n".join(rows) + "\\n")
    (out / "plot.png").write_bytes(png(64, 32))


if __name__ == "__main__":
    main()
`;

let e: E2E;
let browser: Browser;
let page: Page;
const problems: string[] = [];
const runs: string[] = [];

beforeAll(async () => {
  e = await startE2E("cp-e2e-ui-results", {
    env: { CODEPLANE_LOG_LEVEL: "info", CODEPLANE_RATE_LIMIT_REQUESTS: "0" },
    prepare: async (f) => void (await f.commit("main", { "train.py": TRAIN })),
  });
  browser = await launchBrowser();
  page = await (await browser.newContext({ viewport: { width: 1200, height: 900 } })).newPage();
  page.setDefaultTimeout(60_000);
  page.on("console", (m) => {
    if (m.type() === "error" && !m.text().startsWith("Failed to load resource")) problems.push(m.text());
  });
  page.on("pageerror", (err) => problems.push(err.message));
  await page.goto(`${e.svc.url}/ui/`);
  await page.locator("#api-key").fill(e.alice.key);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { name: "Repositories" }).waitFor();
}, 600_000);

afterAll(async () => {
  await browser?.close();
  await e?.close();
});

describe("results in the dashboard on a real cluster", () => {
  it("runs an analysed experiment twice with different parameters", async () => {
    const res = await e.alice.api(`/v1/repositories/${e.repoId}/analysis/main`, { method: "POST", json: {} });
    expect(res.status, await res.clone().text()).toBe(201);
    const analysis = await until("the analysis", 300_000, async () => {
      const a = (await (await e.alice.api(`/v1/repositories/${e.repoId}/analysis/main`)).json()) as { status: string; experiments: { id: string }[] };
      if (a.status === "failed" || a.status === "cancelled") throw new Error(`analysis ${a.status}: ${JSON.stringify(a)}`);
      return a.status === "completed" ? a : undefined;
    });
    expect(analysis.experiments.map((x) => x.id)).toContain("python:train.py");
    for (const lr of [0.1, 0.5]) {
      const r = await e.alice.api(`/v1/repositories/${e.repoId}/main/runs`, {
        method: "POST",
        json: { analyzed_experiment: "python:train.py", parameters: { lr }, timeout_seconds: 600 },
      });
      expect(r.status, await r.clone().text()).toBe(201);
      runs.push(((await r.json()) as { run_id: string }).run_id);
    }
    for (const id of runs) {
      const run = await until(`run ${id} to end with its outputs and metrics`, 420_000, async () => {
        const body = (await (await e.alice.api(`/v1/runs/${id}`)).json()) as { status: string; final_metrics: Record<string, number>; error: string | null };
        if (body.status === "failed" || body.status === "cancelled") throw new Error(`run ${id} ${body.status}: ${body.error}`);
        if (body.status !== "completed" || !("accuracy" in body.final_metrics)) return undefined;
        const outputs = (await (await e.alice.api(`/v1/runs/${id}/outputs`)).json()) as { items: unknown[] };
        return outputs.items.length === 2 ? body : undefined;
      });
      expect(Object.keys(run.final_metrics).sort()).toEqual(["accuracy", "loss"]);
    }
  }, 900_000);

  it("plots the run's metrics and previews its outputs", async () => {
    await page.goto(`${e.svc.url}/ui/#/runs/${runs[1]}`);
    await page.getByRole("heading", { name: `Run ${runs[1]}` }).waitFor();
    await page.locator('figure[data-metric="loss"] canvas').waitFor();
    // lr 0.5: 0.5, 0.25, 0.125, 0.0625.
    expect(await page.locator('figure[data-metric="loss"] figcaption').textContent()).toBe(
      "loss · 4 points, steps 0–3; final 0.0625, lowest 0.0625, highest 0.5",
    );
    const csv = page.locator('details.output[data-path="scores.csv"]');
    await csv.locator(".output-preview[data-state=shown] table").waitFor();
    expect(await csv.locator("tbody tr").last().locator("td").allTextContents()).toEqual(["3", "0.0625"]);
    const img = page.locator('details.output[data-path="plot.png"] img.preview-image');
    await expect
      .poll(() => img.evaluate((i) => (i as unknown as { complete: boolean }).complete && (i as unknown as { naturalWidth: number }).naturalWidth), {
        timeout: 60_000,
      })
      .toBe(64);
  }, 240_000);

  it("compares the two runs on the experiment's page", async () => {
    await page.locator("#run-experiment").click();
    await page.getByRole("heading", { name: "Experiment python:train.py" }).waitFor();
    await page.locator("#compare tbody tr").nth(1).waitFor();
    await page.locator('button[data-sort="loss"]').click();
    await page.locator('button[data-sort="loss"]').click();
    // Lowest final loss first: lr 0.5 (0.0625), then lr 0.1 (0.6561).
    expect(await page.locator("#compare tbody tr").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-run-id")))).toEqual([runs[1], runs[0]]);
    expect(await page.locator(`#compare tr[data-run-id="${runs[0]}"] td.col-metric`).allTextContents()).toEqual(["0.3439", "0.6561"]);
    await page.locator("#compare-plot .plot[data-runs='2'] canvas").waitFor();
    expect(await page.locator("#compare-plot .u-legend .u-series").count()).toBe(3);
    expect(problems).toEqual([]);
  }, 240_000);
});
