import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { crc32, deflateSync } from "node:zlib";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AnalyzerResult } from "@codeplane/analyzer";
import { RUN_TABLE } from "../../src/db/workload-tables.ts";
import { mintOutputToken } from "../../src/domain/outputs/output-tokens.ts";
import { runMetricsArchiveHook } from "../../src/domain/runs/run-metrics.ts";
import { logArchiveRows } from "../../src/domain/workloads/log-archive-rows.ts";
import { launchBrowser, UI_TEST_MS, UI_WAIT_MS } from "../helpers/browser.ts";
import { insertRunRow } from "../helpers/seed.ts";
import { twoTenantsWithRepository, type TwoTenants } from "../helpers/two-tenants.ts";

// A run's results on its page and an experiment's runs compared, in Chromium
// against the real service and Postgres (no cluster): runs of one analysed
// experiment with different parameters, their metrics stored by the log
// archiver's own transaction (printed ::metric lines and metrics-file
// records) and their output files sent through the pods' internal door with
// the run's output token, as a run's pod sends them. The previews (an image,
// CSV, JSON, text; markup in a file shown as text, never run; large files
// offered for download only), the metric plots (uPlot, under the dashboard's
// CSP), the experiment's sortable table and its plot of one metric with a line
// per selected run, the links between the pages, and axe-core on each.

const SHOTS = process.env.UI_SCREENSHOTS;
const shot = async (p: Page, name: string, selector: string) => {
  if (SHOTS) await p.locator(selector).screenshot({ path: `${SHOTS}/${name}.png` });
};
const AXE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");
const EXPERIMENT = "python:train.py";

/** A real PNG (RGB, 8 bits) of a gradient, so the browser has something to decode. */
function png(width: number, height: number): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const td = Buffer.concat([Buffer.from(type, "ascii"), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(td));
    return Buffer.concat([len, td, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 2, 0, 0, 0], 8);
  const raw = Buffer.alloc((width * 3 + 1) * height);
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) raw.set([Math.round((255 * x) / width), Math.round((255 * y) / height), 160], y * (width * 3 + 1) + 1 + x * 3);
  return Buffer.concat([Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]), chunk("IHDR", ihdr), chunk("IDAT", deflateSync(raw)), chunk("IEND", Buffer.alloc(0))]);
}

const result: AnalyzerResult = {
  version: 1,
  repo_summary: {
    language: "en",
    text: "Trains a model.",
    title: "Demo",
    description: null,
    languages: [{ name: "Python", files: 1, lines: 10, bytes: 200 }],
    file_count: 1,
    total_bytes: 200,
    license: null,
    manifests: [],
    frameworks: [],
    truncated: false,
    skipped: { binary: 0, too_large: 0, symlinks: 0, unparsable: 0 },
  },
  experiments: [
    {
      id: EXPERIMENT,
      title: "train",
      description: "Trains the model.",
      entry_point: "python3 train.py",
      command: ["python3", "train.py"],
      language: "python",
      kind: "python-script",
      path: "train.py",
      inputs: [],
      outputs: [],
      parameters: [
        { name: "lr", value: 0.1, category: "number", cli_option: "--lr", choices: null, description: null, required: false },
        { name: "optimizer", value: "adam", category: "string", cli_option: "--optimizer", choices: ["adam", "sgd"], description: null, required: false },
      ],
    },
  ],
  primary_ids: [EXPERIMENT],
  env_vars: [],
  stats: { files_scanned: 1, files_parsed: 1, duration_ms: 5 },
};

let t: TwoTenants;
let browser: Browser;
let page: Page;
const problems: string[] = [];
/** Three runs of the experiment: lr 0.1/adam (acc 0.72), lr 0.01/adam (acc 0.91), lr 0.5/sgd (acc 0.55, no loss). */
const runs: Record<"a" | "b" | "c", string> = { a: "", b: "", c: "" };
const IMAGE = png(120, 60);
const CSV = "epoch,loss,accuracy\n0,0.9,0.41\n1,0.5,0.66\n2,0.31,0.72\n";
const BIG_CSV = `i,square\n${Array.from({ length: 30_000 }, (_, i) => `${i},${i * i}`).join("\n")}\n`;
const HTML = '<h1 id="injected">x</h1><script>window.__ran = 1</script><img src=x onerror="window.__ran = 2">\n';
const SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" width="40" height="40"><script>parent.__ran = 3</script><rect width="40" height="40" fill="#0550ae"/></svg>\n';
const JSON_OUT = '{"best":{"epoch":2,"accuracy":0.72},"tags":["a","b"]}';

beforeAll(async () => {
  // The git listener carries the pods' internal door (outputs are sent there).
  t = await twoTenantsWithRepository({ CODEPLANE_GIT_PORT: "0" });
  const { svc, alice, repoId, fixture } = t;
  const analysisId = "0190b1c2-3d4e-7f00-8a1b-2c3d4e5f6a72";
  await svc.db
    .insertInto("analyses")
    .values({
      id: analysisId,
      account_id: alice.accountId,
      repository_id: repoId,
      commit_hash: fixture.commits.main,
      branch: "main",
      language: "en",
      workflow_id: `codeplane/analysis-${analysisId}`,
      status: "completed",
      status_rank: 2,
      result: JSON.stringify(result),
      started_at: new Date(),
      completed_at: new Date(),
      updated_at: new Date(),
    })
    .execute();
  const experimentRun = (parameters: Record<string, unknown>, createdSecondsAgo: number) =>
    insertRunRow(svc.db, {
      accountId: alice.accountId,
      repositoryId: repoId,
      status: "completed",
      logsComplete: true,
      set: {
        commit_hash: fixture.commits.main,
        experiment_id: EXPERIMENT,
        exit_code: 0,
        created_at: new Date(Date.now() - createdSecondsAgo * 1000),
        close_time: new Date(),
        run_config: JSON.stringify({ command: ["python3", "train.py"], parameters, timeout_seconds: 600 }),
      },
    });
  runs.c = await experimentRun({ lr: 0.5, optimizer: "sgd" }, 300);
  runs.b = await experimentRun({ lr: 0.01, optimizer: "adam" }, 200);
  runs.a = await experimentRun({ lr: 0.1, optimizer: "adam" }, 100);
  await printed(runs.a, [0.9, 0.5, 0.31], [0.41, 0.66, 0.72]);
  await printed(runs.b, [0.8, 0.35, 0.2, 0.12], [0.5, 0.7, 0.85, 0.91]);
  await printed(runs.c, null, [0.3, 0.55]);
  await send(runs.a, {
    "metrics/summary.json": JSON_OUT,
    "plots/loss.png": IMAGE,
    "scores.csv": CSV,
    "squares.csv": BIG_CSV,
    "report.html": HTML,
    "plots/logo.svg": SVG,
    "model.bin": Buffer.alloc(3 * 1024 * 1024, 7),
    "plots/huge.png": Buffer.concat([IMAGE, Buffer.alloc(11 * 1024 * 1024)]),
  });
  browser = await launchBrowser();
  const context = await browser.newContext({ acceptDownloads: true, viewport: { width: 1200, height: 900 } });
  page = await context.newPage();
  page.setDefaultTimeout(UI_WAIT_MS);
  page.on("console", (m) => {
    if (m.type() === "error" && !m.text().startsWith("Failed to load resource: the server responded with a status of")) problems.push(m.text());
  });
  page.on("pageerror", (e) => problems.push(e.message));
}, UI_TEST_MS);

afterAll(async () => {
  await browser?.close();
  await t?.close();
});

/** A run's metrics as the log archiver stores them: loss printed as ::metric lines, accuracy appended to the metrics file. */
async function printed(runId: string, loss: number[] | null, accuracy: number[], firstSeq = 1, firstStep = 0) {
  const rows = logArchiveRows(t.svc.db, RUN_TABLE, runMetricsArchiveHook({ maxSeries: 100, maxPointsPerSeries: 10_000, maxNameLength: 128 }));
  const ts = (i: number) => new Date(Date.UTC(2026, 10, 22, 10, 0, i)).toISOString();
  const lines = (loss ?? []).map((v, i) => ({
    seq: firstSeq + i,
    stream: "stdout" as const,
    ts: ts(i),
    line: `::metric name=loss,step=${firstStep + i}::${v}`,
  }));
  const metrics = accuracy.map((v, i) => ({
    seq: firstSeq + lines.length + i,
    ts: ts(i),
    record: JSON.stringify({ name: "accuracy", step: firstStep + i, value: v }),
  }));
  await rows.write(runId, lines, { stdout: 0, stderr: 0 }, { stdout: false, stderr: false }, { lines, metrics });
}

/** Files sent as the run's pod sends them: through the internal door, with the run's output token. */
async function send(runId: string, files: Record<string, string | Buffer>) {
  const token = await mintOutputToken(t.svc.db, runId, t.alice.accountId, new Date(Date.now() + 600_000));
  for (const [p, content] of Object.entries(files)) {
    const body = typeof content === "string" ? Buffer.from(content) : content;
    const res = await fetch(`http://127.0.0.1:${t.svc.service.gitPort}/internal/runs/${runId}/outputs/${p.split("/").map(encodeURIComponent).join("/")}`, {
      method: "PUT",
      headers: { authorization: `Bearer ${token}`, "x-codeplane-size": String(body.length) },
      body,
    });
    if (res.status !== 201) throw new Error(`sending ${p} answered ${res.status}: ${await res.text()}`);
  }
}

async function axe(p: Page): Promise<string[]> {
  await p.evaluate(AXE);
  const found = await p.evaluate<{ id: string; impact: string; nodes: { target: string[] }[] }[]>(
    "axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => ({ target: n.target })) })))",
  );
  return found
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
}

const entry = (path: string) => page.locator(`details.output[data-path="${path}"]`);
async function open(path: string) {
  const e = entry(path);
  if ((await e.getAttribute("open")) === null) await e.locator("summary").click();
  await e.locator(".output-preview[data-state=shown]").waitFor();
  return e;
}

describe("run results and experiment comparison", { timeout: UI_TEST_MS }, () => {
  it("serves uPlot from its package under the dashboard's CSP, and no declaration file", async () => {
    const js = await fetch(`${t.svc.url}/ui/app/uplot.js`);
    expect(js.status).toBe(200);
    expect(js.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect(js.headers.get("content-security-policy")).toContain("script-src 'self';");
    expect(await js.text()).toBe(readFileSync(createRequire(import.meta.url).resolve("uplot/dist/uPlot.esm.js"), "utf8"));
    expect((await fetch(`${t.svc.url}/ui/app/uplot.css`)).headers.get("content-type")).toBe("text/css; charset=utf-8");
    expect((await fetch(`${t.svc.url}/ui/app/uplot.d.ts`)).status).toBe(404);
  });

  it("signs in", async () => {
    await page.goto(`${t.svc.url}/ui/`);
    await page.locator("#api-key").fill(t.alice.key);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { name: "Repositories" }).waitFor();
  });

  it("plots each metric of a run over its steps", async () => {
    await page.goto(`${t.svc.url}/ui/#/runs/${runs.a}`);
    await page.getByRole("heading", { name: `Run ${runs.a}` }).waitFor();
    const loss = page.locator('figure[data-metric="loss"]');
    await loss.locator("canvas").waitFor();
    expect(await page.locator("#metrics figure").evaluateAll((els) => els.map((e) => e.getAttribute("data-metric")))).toEqual(["accuracy", "loss"]);
    expect(await loss.locator("figcaption").textContent()).toBe("loss · 3 points, steps 0–2; final 0.31, lowest 0.31, highest 0.9");
    expect(await page.locator('figure[data-metric="accuracy"] figcaption').textContent()).toBe(
      "accuracy · 3 points, steps 0–2; final 0.72, lowest 0.41, highest 0.72",
    );
    // uPlot drew it: a canvas with the plot's size and its legend naming the series.
    const size = await loss.locator("canvas").evaluate((c) => [(c as unknown as { width: number }).width, (c as unknown as { height: number }).height]);
    expect(size[0]).toBeGreaterThan(200);
    expect(size[1]).toBeGreaterThan(100);
    expect(await loss.locator(".u-legend .u-series").allTextContents()).toEqual(expect.arrayContaining([expect.stringContaining("loss")]));
    // The cursor over the plot reads a point out in the legend.
    await loss.scrollIntoViewIfNeeded();
    const box = (await loss.locator(".u-over").boundingBox())!;
    await page.mouse.move(box.x + box.width - 2, box.y + box.height / 2);
    await expect.poll(() => loss.locator(".u-legend .u-series").nth(1).locator(".u-value").textContent(), { timeout: UI_WAIT_MS }).toBe("0.31");
  });

  it("lists the run's outputs with previews: an image, CSV as a table, JSON indented, text, large files for download only", async () => {
    await entry("scores.csv").waitFor();
    expect(await page.locator("details.output").evaluateAll((els) => els.map((e) => e.getAttribute("data-path")))).toEqual([
      "metrics/summary.json",
      "model.bin",
      "plots/huge.png",
      "plots/logo.svg",
      "plots/loss.png",
      "report.html",
      "scores.csv",
      "squares.csv",
    ]);
    // The first three small previewable files open by themselves: the JSON, the SVG and the PNG.
    expect(await page.locator("details.output[open]").evaluateAll((els) => els.map((e) => e.getAttribute("data-path")))).toEqual([
      "metrics/summary.json",
      "plots/logo.svg",
      "plots/loss.png",
    ]);
    const json = await open("metrics/summary.json");
    expect(await json.locator("pre.preview-text").textContent()).toBe(JSON.stringify(JSON.parse(JSON_OUT), null, 2));
    // The image, read by the browser with the session cookie from the API's own URL, and decoded.
    const img = (await open("plots/loss.png")).locator("img.preview-image");
    await expect
      .poll(() => img.evaluate((i) => (i as unknown as { complete: boolean }).complete && (i as unknown as { naturalWidth: number }).naturalWidth), {
        timeout: UI_WAIT_MS,
      })
      .toBe(120);
    expect(await img.getAttribute("alt")).toBe("Output plots/loss.png");
    const svg = (await open("plots/logo.svg")).locator("img.preview-image");
    await expect
      .poll(() => svg.evaluate((i) => (i as unknown as { complete: boolean }).complete && (i as unknown as { naturalWidth: number }).naturalWidth), {
        timeout: UI_WAIT_MS,
      })
      .toBe(40);
    // CSV as a table.
    const csv = await open("scores.csv");
    expect(await csv.locator("thead th").allTextContents()).toEqual(["epoch", "loss", "accuracy"]);
    expect(await csv.locator("tbody tr").evaluateAll((rows) => rows.map((r) => [...r.children].map((c) => c.textContent)))).toEqual([
      ["0", "0.9", "0.41"],
      ["1", "0.5", "0.66"],
      ["2", "0.31", "0.72"],
    ]);
    expect(await csv.locator(".preview-note").count()).toBe(0);
    // A large CSV: its first bytes only (a range request), the first 200 rows, and a note.
    const big = await open("squares.csv");
    expect(await big.locator("tbody tr").count()).toBe(200);
    expect(await big.locator("tbody tr").last().locator("td").allTextContents()).toEqual(["199", "39601"]);
    expect(await big.locator(".preview-note").textContent()).toMatch(/^The first 200 rows \(and a header\) of \d+\.\d KiB; download it for the rest\.$/);
    // Markup in a file is text: nothing of it is parsed or run.
    const html = await open("report.html");
    expect(await html.locator("pre.preview-text").textContent()).toBe(HTML);
    expect(await page.locator("#injected").count()).toBe(0);
    expect(await page.locator("#outputs script, #outputs img:not(.preview-image)").count()).toBe(0);
    expect(await page.evaluate("window.__ran")).toBeUndefined();
    // Large or binary files: download only.
    expect(await (await open("plots/huge.png")).locator(".output-preview").textContent()).toMatch(/^Too large to preview \(11\.0 MiB\): download it\.$/);
    expect(await (await open("model.bin")).locator(".output-preview").textContent()).toBe("No preview for application/octet-stream: download it.");
    const [download] = await Promise.all([page.waitForEvent("download"), entry("scores.csv").getByRole("link", { name: "Download" }).click()]);
    expect(download.suggestedFilename()).toBe("scores.csv");
    expect(readFileSync(await download.path(), "utf8")).toBe(CSV);
    expect(await page.locator("#outputs-archive").getAttribute("href")).toBe(`/v1/runs/${runs.a}/outputs.tar.gz`);
    await shot(page, "run-results", "#results");
    expect(await axe(page)).toEqual([]);
  });

  it("compares the experiment's runs: a table sorted by any column, and one plot with a line per selected run", async () => {
    await page.locator("#run-experiment").click();
    await page.getByRole("heading", { name: `Experiment ${EXPERIMENT}` }).waitFor();
    const order = () => page.locator("#compare tbody tr").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-run-id")));
    // Newest first, as the run list answers.
    await page.locator("#compare tbody tr").nth(2).waitFor();
    expect(await order()).toEqual([runs.a, runs.b, runs.c]);
    expect(await page.locator("#experiment-count").textContent()).toBe("3 runs, with 2 parameters and 2 metrics.");
    expect(await page.locator("#compare thead th").allTextContents()).toEqual([
      "Plot",
      "Run",
      "Status",
      "Created ▼",
      "lr",
      "optimizer",
      "accuracy (final)",
      "loss (final)",
    ]);
    const row = (id: string) => page.locator(`#compare tr[data-run-id="${id}"] td`).allTextContents();
    expect((await row(runs.b)).slice(4)).toEqual(["0.01", "adam", "0.91", "0.12"]);
    expect((await row(runs.c)).slice(4)).toEqual(["0.5", "sgd", "0.55", ""]);
    // Sorted by the final accuracy: highest first, then lowest first.
    await page.locator('button[data-sort="accuracy"]').click();
    expect(await order()).toEqual([runs.b, runs.a, runs.c]);
    expect(await page.locator('th:has(button[data-sort="accuracy"])').getAttribute("aria-sort")).toBe("descending");
    await page.locator('button[data-sort="accuracy"]').click();
    expect(await order()).toEqual([runs.c, runs.a, runs.b]);
    expect(await page.locator('th:has(button[data-sort="accuracy"])').getAttribute("aria-sort")).toBe("ascending");
    expect(await page.locator('th:has(button[data-sort="Created"])').getAttribute("aria-sort")).toBeNull();
    // By loss: the run without one stays last whichever the direction.
    await page.locator('button[data-sort="loss"]').click();
    expect(await order()).toEqual([runs.a, runs.b, runs.c]);
    await page.locator('button[data-sort="loss"]').click();
    expect(await order()).toEqual([runs.b, runs.a, runs.c]);
    await page.locator('button[data-sort="lr"]').click();
    expect(await order()).toEqual([runs.c, runs.a, runs.b]);

    // The plot: the first metric, a line per selected run (all three reported one).
    const plot = page.locator("#compare-plot");
    await page.locator("#compare-plot .plot[data-runs='3'] canvas").waitFor();
    expect(await page.locator("#plot-state").textContent()).toBe("accuracy over steps: 3 runs.");
    expect(await plot.locator(".u-legend .u-series").count()).toBe(4); // the x axis's, and one per run
    const labels = await plot.locator(".u-legend .u-series .u-label").allTextContents();
    expect(labels.slice(1).sort()).toEqual(
      [`${runs.a.slice(-8)} lr=0.1 optimizer=adam`, `${runs.b.slice(-8)} lr=0.01 optimizer=adam`, `${runs.c.slice(-8)} lr=0.5 optimizer=sgd`].sort(),
    );
    await shot(page, "experiment", "main");
    expect(await axe(page)).toEqual([]);
    // Another metric: the run without it is said so.
    await page.locator("#plot-metric").selectOption("loss");
    await page.locator("#plot-state", { hasText: "loss over steps: 3 runs (1 without this metric)." }).waitFor();
    // A run unselected leaves the plot.
    await page.getByRole("checkbox", { name: `Plot run ${runs.c.slice(-12)}` }).uncheck();
    await page.locator("#compare-plot .plot[data-runs='2']").waitFor();
    await page.locator("#plot-state", { hasText: "loss over steps: 2 runs." }).waitFor();
    expect(await plot.locator(".u-legend .u-series").count()).toBe(3);
    // Each run links to its page.
    await page.locator(`#compare tr[data-run-id="${runs.b}"]`).getByRole("link").click();
    await page.getByRole("heading", { name: `Run ${runs.b}` }).waitFor();
    await page.locator("#outputs", { hasText: "No output files." }).waitFor();
    await page.locator('figure[data-metric="loss"] canvas').waitFor();
  });

  it("links the analysis page's experiments to their comparison", async () => {
    await page.goto(`${t.svc.url}/ui/#/repos/${t.repoId}/analysis/${t.fixture.commits.main}`);
    await page.getByRole("heading", { name: "train (primary)" }).waitFor();
    await page.getByRole("link", { name: "Compare its runs" }).click();
    await page.getByRole("heading", { name: `Experiment ${EXPERIMENT}` }).waitFor();
    expect(page.url()).toBe(`${t.svc.url}/ui/#/repos/${t.repoId}/experiments/${encodeURIComponent(EXPERIMENT)}`);
    await page.locator("#compare tbody tr").nth(2).waitFor();
  });

  it("draws a running run's metrics as they are archived", async () => {
    const running = await insertRunRow(t.svc.db, {
      accountId: t.alice.accountId,
      repositoryId: t.repoId,
      status: "running",
      set: {
        start_time: new Date(),
        experiment_id: EXPERIMENT,
        run_config: JSON.stringify({ command: ["python3", "train.py"], parameters: {}, timeout_seconds: 600 }),
      },
    });
    await page.goto(`${t.svc.url}/ui/#/runs/${running}`);
    await page.getByRole("heading", { name: `Run ${running}` }).waitFor();
    await page.locator("#metrics", { hasText: "No metrics yet." }).waitFor();
    // The outputs are read apart from the metrics: wait for their answer, do not read the box once.
    await page.locator("#outputs", { hasText: "Output files are sent when the command ends" }).waitFor();
    await printed(running, [1.5, 1.1], []);
    await page.locator('figure[data-metric="loss"] figcaption', { hasText: "2 points, steps 0–1; final 1.1" }).waitFor();
    // More points of the same series: the plot takes them as it is (its canvas stays), its caption says so.
    await page.locator('figure[data-metric="loss"] canvas').evaluate((c) => void ((c as unknown as { mark: number }).mark = 1));
    await printed(running, [0.7], [], 3, 2);
    await page.locator('figure[data-metric="loss"] figcaption', { hasText: "3 points, steps 0–2; final 0.7" }).waitFor();
    expect(await page.locator('figure[data-metric="loss"] canvas').evaluate((c) => (c as unknown as { mark?: number }).mark)).toBe(1);
    await printed(running, null, [0.2], 4);
    await page.locator('figure[data-metric="accuracy"] canvas').waitFor();
    expect(await axe(page)).toEqual([]);
    await t.svc.db.updateTable("runs").set({ status: "completed", close_time: new Date(), logs_complete: true }).where("id", "=", running).execute();
  });

  it("saw no console error, page error or CSP violation", () => {
    expect(problems).toEqual([]);
  });
});
