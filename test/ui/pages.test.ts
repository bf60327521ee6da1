import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { Browser, Page } from "playwright-core";
import { launchBrowser, UI_TEST_MS, UI_WAIT_MS } from "../helpers/browser.ts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AnalyzerResult } from "@codeplane/analyzer";
import { insertRunRow } from "../helpers/seed.ts";
import { twoTenantsWithRepository, type TwoTenants } from "../helpers/two-tenants.ts";

// The dashboard's analyses, runs and run pages in Chromium with no cluster:
// an analysis and runs written the way the controller writes them, a run's
// stored output replayed and downloaded, the API's 422 shown next to its
// field; a run's phases from its timeline and its environment's install output
// (stored, and live from the stream's setup events); and axe-core on every
// page, with no serious or critical violation.

/** An elapsed time as the page writes it under an hour: "12 s" or "2 min 05 s". */
const ELAPSED = /^(\d+ s|\d+ min \d\d s)$/;
/** `make screenshots` sets this: the pages are photographed into it for the README. */
const SHOTS = process.env.UI_SCREENSHOTS;
const shot = async (p: Page, name: string) => {
  if (SHOTS) await p.screenshot({ path: `${SHOTS}/${name}.png` });
};
const AXE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

const result: AnalyzerResult = {
  version: 1,
  repo_summary: {
    language: "en",
    text: "A Python project that trains a model.",
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
      id: "python:train.py",
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
        { name: "epochs", value: 3, category: "integer", cli_option: "--epochs", choices: null, description: "Passes over the data.", required: false },
        { name: "optimizer", value: "adam", category: "string", cli_option: "--optimizer", choices: ["adam", "sgd"], description: null, required: false },
      ],
      required_env_vars: ["API_TOKEN"],
    },
    {
      id: "npm:start",
      title: "start",
      description: "node server.js",
      entry_point: "npm run start --",
      command: ["npm", "run", "start", "--"],
      language: "javascript",
      kind: "npm-script",
      path: "package.json",
      inputs: [],
      outputs: [],
      parameters: [
        {
          name: "port",
          value: 3000,
          category: "integer",
          cli_option: null,
          env_var: "PORT",
          choices: null,
          description: "The port the server listens on",
          required: false,
        },
      ],
      required_env_vars: [],
    },
  ],
  primary_ids: ["python:train.py"],
  env_vars: [{ name: "API_TOKEN", path: "train.py", line: 4, required: true }],
  stats: { files_scanned: 1, files_parsed: 1, duration_ms: 5 },
};

let t: TwoTenants;
let browser: Browser;
let page: Page;
let finishedRun: string;
let failedRun: string;
let envRun: string;
let buildingRun: string;
const problems: string[] = [];

beforeAll(async () => {
  t = await twoTenantsWithRepository();
  const { svc, alice, repoId, fixture } = t;
  const id = "0190b1c2-3d4e-7f00-8a1b-2c3d4e5f6a71";
  await svc.db
    .insertInto("analyses")
    .values({
      id,
      account_id: alice.accountId,
      repository_id: repoId,
      commit_hash: fixture.commits.main,
      branch: "main",
      language: "en",
      workflow_id: `codeplane/analysis-${id}`,
      status: "completed",
      status_rank: 2,
      result: JSON.stringify(result),
      started_at: new Date(),
      completed_at: new Date(),
      updated_at: new Date(),
    })
    .execute();
  // The finished run went through every step in about 12 s (its page is the README's screenshot).
  const at = (s: number) => new Date(Date.parse("2026-11-22T09:59:48.000Z") + s * 1000);
  finishedRun = await insertRunRow(svc.db, {
    accountId: alice.accountId,
    repositoryId: repoId,
    status: "completed",
    logsComplete: true,
    set: {
      created_at: at(0),
      start_time: at(12),
      first_output_at: at(12.123),
      close_time: at(14.5),
      timeline: JSON.stringify({
        admitted: at(1).toISOString(),
        scheduled: at(1).toISOString(),
        imageReady: at(9).toISOString(),
        checkedOut: at(11).toISOString(),
      }),
    },
  });
  failedRun = await insertRunRow(svc.db, { accountId: alice.accountId, repositoryId: repoId, status: "failed", logsComplete: true });
  await svc.db.updateTable("runs").set({ exit_code: 0 }).where("id", "=", finishedRun).execute();
  await svc.db.updateTable("runs").set({ exit_code: 1, error: "command exited with code 1" }).where("id", "=", failedRun).execute();
  const ts = new Date("2026-11-22T10:00:00.123Z");
  await svc.db
    .insertInto("run_log_lines")
    .values(
      Array.from({ length: 30 }, (_, i) => ({
        run_id: finishedRun,
        seq: i + 1,
        stream: i % 3 === 2 ? "stderr" : "stdout",
        ts,
        line: i % 3 === 2 ? `warning ${i + 1}` : `\u001b[1;34mstep ${i + 1}\u001b[0m done`,
      })),
    )
    .execute();
  // A run restored from a cached environment, with every step of its timeline, and one waiting for its environment's build.
  const T = (s: number) => new Date(Date.parse("2026-11-22T09:59:40.000Z") + s * 1000);
  const image = "codeplane-runner:dev";
  const [CACHED_KEY, BUILDING_KEY] = ["c".repeat(64), "b".repeat(64)];
  const definition = JSON.stringify({ toolchains: [], manifests: [], steps: [], cache_paths: [], packages: [], notes: [], warnings: [] });
  const environment = (key: string, status: "ready" | "building", log: string | null) => ({
    id: randomUUID(),
    account_id: alice.accountId,
    repository_id: repoId,
    commit_hash: fixture.commits.main,
    key,
    image,
    definition,
    status,
    log,
    completed_at: status === "ready" ? T(-60) : null,
  });
  await svc.db
    .insertInto("environments")
    .values([
      environment(CACHED_KEY, "ready", "Collecting click==8.1.7\n\u001b[32mSuccessfully installed click-8.1.7\u001b[0m\n"),
      environment(BUILDING_KEY, "building", null),
    ])
    .execute();
  envRun = await insertRunRow(svc.db, {
    accountId: alice.accountId,
    repositoryId: repoId,
    status: "completed",
    logsComplete: true,
    set: {
      exit_code: 0,
      created_at: T(0),
      start_time: T(12.5),
      first_output_at: T(13.25),
      close_time: T(20),
      environment: JSON.stringify({ key: CACHED_KEY, image, cache: "hit", warnings: [] }),
      timeline: JSON.stringify({
        admitted: T(2).toISOString(),
        scheduled: T(3).toISOString(),
        imageReady: T(7).toISOString(),
        checkedOut: T(9).toISOString(),
        environmentReady: T(12).toISOString(),
      }),
    },
  });
  await svc.db
    .insertInto("run_log_lines")
    .values({ run_id: envRun, seq: 1, stream: "stdout", ts: T(13.25), line: "hello from the command" })
    .execute();
  buildingRun = await insertRunRow(svc.db, {
    accountId: alice.accountId,
    repositoryId: repoId,
    status: "preprocessing",
    set: { created_at: new Date(Date.now() - 30_000), environment: JSON.stringify({ key: BUILDING_KEY, image, warnings: [] }) },
  });
  browser = await launchBrowser();
  const context = await browser.newContext({ acceptDownloads: true, viewport: { width: 1200, height: 760 } });
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

/** axe-core in the page (evaluated over the DevTools protocol, so the page's CSP is not loosened for it). */
async function axe(p: Page): Promise<string[]> {
  await p.evaluate(AXE);
  const found = await p.evaluate<{ id: string; impact: string; nodes: { target: string[] }[] }[]>(
    "axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => ({ target: n.target })) })))",
  );
  return found
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
}

describe("dashboard pages", { timeout: UI_TEST_MS }, () => {
  it("the sign-in page is accessible, and signing in works", async () => {
    await page.goto(`${t.svc.url}/ui/`);
    await page.locator("#api-key").waitFor();
    expect(await axe(page)).toEqual([]);
    await page.locator("#api-key").fill(t.alice.key);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { name: "Repositories" }).waitFor();
  });

  it("shows an analysis: summary, experiments with their parameters, each one's missing variables linked to their form", async () => {
    await page.goto(`${t.svc.url}/ui/#/repos/${t.repoId}/analysis/${t.fixture.commits.main}`);
    await page.getByRole("heading", { name: "train (primary)" }).waitFor();
    await shot(page, "analysis");
    const train = page.locator('[data-experiment="python:train.py"]');
    const server = page.locator('[data-experiment="npm:start"]');
    expect(await page.locator("#summary").textContent()).toContain("A Python project that trains a model.");
    expect(await train.getByLabel(/^epochs/).inputValue()).toBe("3");
    expect(
      await train
        .getByLabel(/^optimizer/)
        .locator("option")
        .allTextContents(),
    ).toEqual(["adam", "sgd"]);
    // A parameter passed as an environment variable says which.
    expect(await server.getByLabel(/^port \(\$PORT\)/).inputValue()).toBe("3000");
    // train cannot start without API_TOKEN: it says so and its Start run is disabled; the server needs nothing.
    expect(await train.locator(".missing-env").textContent()).toContain("API_TOKEN");
    expect(await train.getByRole("button", { name: "Start run" }).isDisabled()).toBe(true);
    expect(await server.locator(".missing-env").count()).toBe(0);
    expect(await server.getByRole("button", { name: "Start run" }).isEnabled()).toBe(true);
    expect(await axe(page)).toEqual([]);
    await train.locator(".missing-env").getByRole("link", { name: "API_TOKEN" }).click();
    await page.getByRole("heading", { name: "Environment variables of a repository" }).waitFor();
    expect(await page.locator("#env-name").inputValue()).toBe("API_TOKEN");
    await page.locator("#env-value").fill("tok-123");
    await page.getByRole("button", { name: "Add variable" }).click();
    await page.locator('[data-env="API_TOKEN"]').waitFor();
    expect(await axe(page)).toEqual([]);
    // Set: nothing is missing any more and train's form works.
    await page.goBack();
    await page.getByRole("heading", { name: "train (primary)" }).waitFor();
    expect(await page.locator("#missing-env").count()).toBe(0);
    expect(await train.locator(".missing-env").count()).toBe(0);
    // The API's 422 next to the field it names.
    await train.getByLabel(/^epochs/).fill("2.5");
    await train.getByLabel("Timeout (seconds)").fill("0");
    await train.getByRole("button", { name: "Start run" }).click();
    await train.locator("label", { hasText: "Timeout (seconds)" }).locator(".field-error", { hasText: /\S/ }).waitFor();
    await train.getByLabel("Timeout (seconds)").fill("60");
    await train.getByRole("button", { name: "Start run" }).click();
    await train.locator('[data-error-for="epochs"]', { hasText: /\S/ }).waitFor();
    expect(await train.locator("label", { hasText: "Timeout (seconds)" }).locator(".field-error").textContent()).toBe("");
    // A valid request gets as far as the cluster, which this service has none of (503, its detail shown).
    await train.getByLabel(/^epochs/).fill("5");
    await train.getByRole("button", { name: "Start run" }).click();
    await train.locator("[role=alert]", { hasText: /Kubernetes|cluster/i }).waitFor();
  });

  it("lists runs with their status, filtered", async () => {
    await page.goto(`${t.svc.url}/ui/#/runs`);
    await page.locator(`[data-run-id="${failedRun}"]`).waitFor();
    await page.locator(`[data-run-id="${finishedRun}"]`).waitFor();
    await shot(page, "runs");
    expect(await axe(page)).toEqual([]);
    // The duration column: creation to end, or so far with the phase in progress.
    expect(await page.locator(`[data-run-id="${envRun}"] td.duration`).textContent()).toBe("20 s");
    expect(await page.locator(`[data-run-id="${buildingRun}"] td.duration`).textContent()).toMatch(/^(\d+ min )?\d+ s so far$/);
    expect(await page.locator(`[data-run-id="${buildingRun}"] [data-phase]`).textContent()).toBe(" · Building environment");
    // One line per run (the whole command on hover), its repository by name, its creation relative (absolute on hover).
    const row = page.locator(`[data-run-id="${failedRun}"]`);
    expect(await row.locator("td.what").getAttribute("title")).toBe("true");
    expect(await page.evaluate<string>(`getComputedStyle(document.querySelector('[data-run-id="${failedRun}"] td.what')).whiteSpace`)).toBe("nowrap");
    expect(await row.getByRole("link", { name: "r", exact: true }).getAttribute("href")).toBe(`#/repos/${t.repoId}`);
    expect(await row.locator("td.created time").textContent()).toBe("just now");
    expect(await row.locator("td.created time").getAttribute("title")).toMatch(/\d/);
    expect(await page.title()).toBe("Runs · codeplane");
    // A status icon beside the status's name (decoration: the name is what is read out).
    expect(await row.locator(".status-icon").getAttribute("aria-hidden")).toBe("true");
    expect(await row.locator(".status-icon").textContent()).toBe("✗");
    // The header names the account, not its id.
    expect(await page.locator("#who").textContent()).toMatch(/^acct-/);
    await page.locator("#filter-status").selectOption("failed");
    await expect.poll(() => page.locator("[data-run-id]").count(), { timeout: UI_WAIT_MS }).toBe(1);
    expect(await page.locator(`[data-run-id="${failedRun}"] [data-status]`).getAttribute("data-status")).toBe("failed");
    // Filtered by repository (by name), in the address too.
    await page.locator("#filter-repository").selectOption({ label: "r" });
    await expect.poll(() => new URL(page.url()).hash, { timeout: UI_WAIT_MS }).toBe(`#/runs?status=failed&repository_id=${t.repoId}`);
    await expect.poll(() => page.locator("[data-run-id]").count(), { timeout: UI_WAIT_MS }).toBe(1);
    expect(await axe(page)).toEqual([]);
  });

  it("replays a finished run's stored output, with colours, filter, search and download", async () => {
    await page.goto(`${t.svc.url}/ui/#/runs/${finishedRun}`);
    await page.locator("#log-state", { hasText: /^ended: completed, exit code 0$/ }).waitFor();
    expect(await page.locator("#log .l").count()).toBe(30);
    expect(await page.title()).toBe(`Run ${finishedRun.slice(-12)} (completed) · codeplane`);
    await shot(page, "run");
    expect(await page.locator("#log .l.stdout .f34.a-b").count()).toBe(20);
    expect(await page.locator("#log .l").first().textContent()).toBe("110:00:00.123step 1 done");
    await page.locator("#log-filter").selectOption("stderr");
    await page.locator("#log-info", { hasText: /^10 stderr lines ·/ }).waitFor();
    expect(await page.locator("#log .l").count()).toBe(10);
    await page.locator("#log-filter").selectOption("both");
    await page.locator("#log-info", { hasText: /^30 lines ·/ }).waitFor();
    // Search is the server's, over the whole log: matches are highlighted and jumped to, nothing is hidden.
    await page.locator("#log-search").fill("STEP 2");
    await page.locator("#log-search-info", { hasText: "match 1 of 8, line 2" }).waitFor(); // step 2, and 20 to 29 but the stderr lines 21, 24, 27
    expect(await page.locator("#log .l").count()).toBe(30);
    expect(await page.locator("#log mark").first().textContent()).toBe("step 2");
    await page.locator("#log-search-next").click();
    await page.locator("#log-search-info", { hasText: "match 2 of 8, line 20" }).waitFor();
    // The current line is marked when the view next draws (an animation frame after the info line): wait for it.
    await page.locator('#log .l.current[data-seq="20"]').waitFor();
    expect(await page.locator("#log .l.current").count()).toBe(1);
    // Axe-core with a match highlighted: its colours stay readable inside ANSI colours.
    expect(await axe(page)).toEqual([]);
    await page.locator("#log-search").fill("");
    await expect.poll(() => page.locator("#log mark").count(), { timeout: UI_WAIT_MS }).toBe(0);
    await page.locator("#log-ts").uncheck();
    expect(await page.locator("#log .l .t").first().isVisible()).toBe(false);
    const [download] = await Promise.all([page.waitForEvent("download"), page.locator("#download-stderr").click()]);
    expect(readFileSync(await download.path(), "utf8")).toBe(Array.from({ length: 10 }, (_, i) => `warning ${3 * i + 3}\n`).join(""));
    expect(await axe(page)).toEqual([]);
  });

  it("shows a finished run's phases with their durations, its time to first output, and its stored setup log on demand", async () => {
    await page.goto(`${t.svc.url}/ui/#/runs/${envRun}`);
    // Only a hash changes, so the last run's page is still there until this one replaces it: wait for its heading first.
    await page.getByRole("heading", { name: `Run ${envRun}` }).waitFor();
    await page.locator("#log-state", { hasText: /^ended: completed, exit code 0$/ }).waitFor();
    await page.locator('#phases > li[data-phase="ended"]').waitFor();
    const items = await page
      .locator("#phases > li")
      .evaluateAll((els) => els.map((el) => `${el.getAttribute("data-phase")}:${el.getAttribute("data-state")}:${el.textContent}`));
    expect(items).toEqual([
      "queued:done:Queued 2.0 s ✓done",
      "scheduling:done:Scheduling 1.0 s ✓done",
      "image:done:Image 4.0 s ✓done",
      "checkout:done:Checkout 2.0 s ✓done",
      "environment:done:Environment (cached) 3.0 s ✓done",
      "command:done:Command 7.5 s ✓done",
      "ended:done:Ended completed, 20 s in all",
    ]);
    expect(await page.locator("#first-output").textContent()).toBe("Time to first output: 13 s after the run was created (0.8 s after its command started).");
    expect(await page.locator("#run-phase").count(), "no phase in progress").toBe(0);
    // The setup log: closed, read when opened (by keyboard), never in the output.
    const setup = page.locator("#setup");
    expect(await setup.getAttribute("open")).toBeNull();
    await setup.locator("summary").focus();
    await page.keyboard.press("Enter");
    await page.locator("#setup-log .l", { hasText: "Successfully installed click-8.1.7" }).waitFor();
    expect(await page.locator("#setup-log .l").allTextContents()).toEqual(["Collecting click==8.1.7", "Successfully installed click-8.1.7"]);
    expect(await page.locator("#setup-log .l .f32").count()).toBe(1);
    expect(await page.locator("#setup-count").textContent()).toBe("(2 lines)");
    expect(await page.locator("#log .l").allTextContents()).toEqual(["109:59:53.250hello from the command"]);
    await shot(page, "run-phases");
    expect(await axe(page)).toEqual([]);
    await page.keyboard.press("Enter");
    expect(await setup.getAttribute("open")).toBeNull();
  });

  it("shows a run building its environment: the phase in the header with its time growing, the stream's setup lines apart from the output", async () => {
    // The stream as the contract (event: setup, event: timeline) has it; no cluster builds anything here.
    const setupEvent = (n: number, line: string) =>
      `event: setup\nid: 0:preprocessing/${n}\ndata: ${JSON.stringify({ n, ts: new Date().toISOString(), line })}\n\n`;
    const { timeline } = (await (await t.alice.api(`/v1/runs/${buildingRun}`)).json()) as { timeline: unknown[] };
    const stream = `retry: 600000\n\nevent: status\nid: 0:preprocessing\ndata: {"status":"preprocessing"}\n\nevent: timeline\ndata: ${JSON.stringify({ timeline })}\n\n${setupEvent(1, "Collecting click==8.1.7")}${setupEvent(2, "\u001b[33mBuilding wheel\u001b[0m")}${setupEvent(1, "Collecting click==8.1.7")}${setupEvent(3, "Successfully installed click-8.1.7")}`;
    await page.route(`**/v1/runs/${buildingRun}/logs/stream**`, (route) =>
      route.fulfill({ status: 200, headers: { "content-type": "text/event-stream", "cache-control": "no-cache" }, body: stream }),
    );
    try {
      await page.goto(`${t.svc.url}/ui/#/runs/${buildingRun}`);
      await page.locator("#run-phase", { hasText: "Building environment" }).waitFor();
      const current = page.locator('#phases > li[aria-current="step"]');
      expect(await current.getAttribute("data-phase")).toBe("queued");
      expect(await current.locator(".phase-state").textContent()).toBe("in progress");
      const env = page.locator('#phases > li[data-phase="environment"]');
      expect([await env.getAttribute("data-state"), await env.locator(".phase-state").textContent(), await env.locator(".phase-note").textContent()]).toEqual([
        "upcoming",
        "not yet",
        "restored once built",
      ]);
      // The time in progress grows, in the header and in the list. It counts
      // from the run's creation earlier in this file, which on a loaded
      // machine can be over a minute ago.
      const shown = await page.locator("#run-phase ~ .elapsed").textContent();
      expect(shown).toMatch(ELAPSED);
      await expect.poll(() => page.locator("#run-phase ~ .elapsed").textContent(), { timeout: UI_WAIT_MS }).not.toBe(shown);
      expect(await current.locator(".elapsed").textContent()).toMatch(ELAPSED);
      // The setup lines open the section, once each, and stay out of stdout and stderr.
      await page.locator("#setup[data-lines='3'][open]").waitFor();
      expect(
        await page.locator("#setup-log .l").evaluateAll((els) => els.map((el) => `${el.getAttribute("data-n")}:${el.lastChild?.textContent ?? ""}`)),
      ).toEqual(["1:Collecting click==8.1.7", "2:Building wheel", "3:Successfully installed click-8.1.7"]);
      expect(await page.locator("#setup-log .l .f33").count()).toBe(1);
      expect(await page.locator("#log .l").count()).toBe(0);
      expect(await page.locator("section[data-received]").getAttribute("data-received")).toBe("0");
      await shot(page, "run-building");
      expect(await axe(page)).toEqual([]);
    } finally {
      await page.unroute(`**/v1/runs/${buildingRun}/logs/stream**`);
    }
  });

  it("follows a running run's timeline from its stream's timeline events, not from reading the run again", async () => {
    const created = Date.now() - 60_000;
    const T = (s: number) => new Date(created + s * 1000);
    const runId = await insertRunRow(t.svc.db, {
      accountId: t.alice.accountId,
      repositoryId: t.repoId,
      status: "running",
      set: {
        created_at: T(0),
        start_time: T(12),
        timeline: JSON.stringify({
          admitted: T(1).toISOString(),
          scheduled: T(2).toISOString(),
          imageReady: T(9).toISOString(),
          checkedOut: T(11).toISOString(),
        }),
      },
    });
    // Every read of the run after the page's first answers with the run as it was then: what changes on the page can only come from the stream.
    const stale = await (await t.alice.api(`/v1/runs/${runId}`)).text();
    let rereads = 0;
    await page.route(`**/v1/runs/${runId}`, (route) => {
      rereads++;
      return route.fulfill({ status: 200, contentType: "application/json", body: stale });
    });
    try {
      await page.goto(`${t.svc.url}/ui/#/runs/${runId}`);
      await page.locator('#phases > li[data-phase="command"][data-state="current"]').waitFor();
      expect(await page.locator("#first-output").textContent()).toBe("No output yet.");
      // The archiver stores the first line: first_output comes on the stream.
      await t.svc.db
        .updateTable("runs")
        .set({ first_output_at: T(14) })
        .where("id", "=", runId)
        .execute();
      await page.locator("#first-output", { hasText: "Time to first output" }).waitFor();
      expect(await page.locator("#first-output").textContent()).toMatch(
        /^Time to first output: 14 s after the run was created \(2(\.0)? s after its command started\)\.$/,
      );
      expect(rereads, "the page was read once, before the stream changed anything").toBeGreaterThanOrEqual(1);
    } finally {
      await page.unroute(`**/v1/runs/${runId}`);
      await t.svc.db.updateTable("runs").set({ status: "completed", close_time: new Date(), logs_complete: true }).where("id", "=", runId).execute();
    }
  });

  it("shows a retried run's attempts: which one it is in the header, how each ended, each linking to its first log line", async () => {
    const T = (s: number) => new Date(Date.parse("2026-11-22T09:00:00.000Z") + s * 1000).toISOString();
    const lost = "the run's pod was deleted before it finished";
    const runId = await insertRunRow(t.svc.db, {
      accountId: t.alice.accountId,
      repositoryId: t.repoId,
      status: "completed",
      logsComplete: true,
      set: {
        exit_code: 0,
        start_time: new Date(T(2)),
        close_time: new Date(T(40)),
        run_config: JSON.stringify({ command: ["python3", "train.py"], parameters: {}, timeout_seconds: 60, retries: 2 }),
        attempts: JSON.stringify([
          { attempt: 1, jobName: "run-a", createdAt: T(0), startTime: T(2), completionTime: T(10), reason: "PodLost", message: lost, logSeqOffset: 0 },
          { attempt: 2, jobName: "run-a-attempt-2", createdAt: T(11), startTime: T(13), completionTime: T(40), reason: "Completed", logSeqOffset: 1e9 },
        ]),
      },
    });
    const line = (seq: number, stream: "stdout" | "stderr", text: string) => ({ run_id: runId, seq, stream, ts: new Date(T(seq < 1e9 ? 3 : 14)), line: text });
    await t.svc.db
      .insertInto("run_log_lines")
      .values([
        line(1, "stdout", "epoch 1"),
        line(2, "stdout", "epoch 2"),
        line(1e9, "stderr", `[codeplane] attempt 2 of 3 started: attempt 1 failed (PodLost): ${lost}`),
        line(1e9 + 1, "stdout", "epoch 1 again"),
      ])
      .execute();
    await page.goto(`${t.svc.url}/ui/#/runs/${runId}`);
    await page.locator("#run-attempt", { hasText: "attempt 2 of 3" }).waitFor();
    const items = page.locator("#run-attempts li");
    expect(await items.count()).toBe(2);
    expect(await items.nth(0).textContent()).toMatch(new RegExp(`^Attempt 1 · PodLost · started .+ · ended .+: ${lost}$`));
    expect(await items.nth(1).textContent()).toMatch(/^Attempt 2 · Completed · started .+ · ended .+$/);
    expect(await axe(page)).toEqual([]);
    // Each attempt's link is its first line's anchor: the log opens there.
    expect(await page.getByRole("link", { name: "Attempt 2", exact: true }).getAttribute("href")).toBe(`#/runs/${runId}#L${1e9}`);
    await page.getByRole("link", { name: "Attempt 1", exact: true }).click();
    await page.locator("#L1.anchored").waitFor();
    expect(new URL(page.url()).hash).toBe(`#/runs/${runId}#L1`);
    expect(await page.locator("#L1").textContent()).toContain("epoch 1");
    await page.locator("#run-attempt", { hasText: "attempt 2 of 3" }).waitFor();
    expect(await axe(page)).toEqual([]);
    // Attempt 2's lines (seq from 1e9) are the rows right after attempt 1's: 4 rows, not a billion, and its link lands on its first line.
    await page.getByRole("link", { name: "Attempt 2", exact: true }).click();
    await page.locator(`#L${1e9}.anchored`).waitFor();
    expect(new URL(page.url()).hash).toBe(`#/runs/${runId}#L${1e9}`);
    expect(await page.locator(`#L${1e9}`).textContent()).toContain("[codeplane] attempt 2 of 3 started");
    await page.locator("#log-info", { hasText: /^4 lines · .*\(each attempt's from its own first_seq\)$/ }).waitFor();
    expect(await page.locator("#log .l").evaluateAll((els) => els.map((e) => e.getAttribute("data-seq")))).toEqual(["1", "2", String(1e9), String(1e9 + 1)]);
    expect(await page.locator("#log .spacer").evaluate((e) => e.getBoundingClientRect().height)).toBe(4 * 18);
    // One stream: its own lines of both attempts.
    await page.locator("#log-filter").selectOption("stdout");
    await page.locator("#log-info", { hasText: /^3 stdout lines/ }).waitFor();
    expect(await page.locator("#log .l").evaluateAll((els) => els.map((e) => e.getAttribute("data-seq")))).toEqual(["1", "2", String(1e9 + 1)]);
    await page.locator("#log-filter").selectOption("both");
    await page.locator(`#L${1e9 + 1}`).waitFor();
    expect(await axe(page)).toEqual([]);
    // A run that neither retries nor did shows none of this.
    await page.goto(`${t.svc.url}/ui/#/runs/${failedRun}`);
    await page.getByRole("heading", { name: `Run ${failedRun}` }).waitFor();
    expect(await page.locator("#run-attempt, #run-attempts").count()).toBe(0);
  });

  it("links a run to its commit, its analysis and its commit's runs; Re-run and errors stay in the view", async () => {
    await page.goto(`${t.svc.url}/ui/#/runs/${failedRun}`);
    await page.getByRole("heading", { name: `Run ${failedRun}` }).waitFor();
    const commit = "a".repeat(40);
    expect(await page.getByRole("link", { name: "Its commit's analysis" }).getAttribute("href")).toBe(`#/repos/${t.repoId}/analysis/${commit}`);
    expect(await page.getByRole("link", { name: "This commit's runs" }).getAttribute("href")).toBe(`#/runs?repository_id=${t.repoId}&commit=${commit}`);
    // Re-run asks the service, which cannot start it here (no cluster, a commit not in the repository): its answer is shown beside the button and the page stays.
    await page.getByRole("button", { name: "Re-run" }).click();
    await page.locator("#rerun-error", { hasText: /\S/ }).waitFor();
    console.log(`Re-run refused: ${await page.locator("#rerun-error").textContent()}`);
    expect(await page.getByRole("heading", { name: `Run ${failedRun}` }).count()).toBe(1);
    expect(await page.getByRole("button", { name: "Re-run" }).isEnabled()).toBe(true);
    expect(await axe(page)).toEqual([]);
    // This commit is not in the repository: the runs view keeps its heading and filters and says why in its error area.
    await page.getByRole("link", { name: "This commit's runs" }).click();
    await page.locator("#view-error", { hasText: /not found/i }).waitFor();
    await page.getByRole("heading", { name: "Runs" }).waitFor();
    expect(await page.locator("#filter-commit").textContent()).toContain(commit.slice(0, 10));
    expect(await axe(page)).toEqual([]);
    // The repository page renders its README (text nodes only, under the CSP).
    await page.goto(`${t.svc.url}/ui/#/repos/${t.repoId}`);
    await page.locator("#readme h3", { hasText: "Fixture" }).waitFor();
    expect(await page.locator("#readme p").first().textContent()).toBe("A repository for codeplane tests.");
    // The last commit: its title, its short hash linking to its runs, its author, when (the date on hover).
    const last = page.locator("#last-commit");
    await last.locator(".commit-title", { hasText: "Add the awkward files" }).waitFor();
    const runsLink = last.getByRole("link");
    expect([await runsLink.textContent(), await runsLink.getAttribute("href")]).toEqual([
      t.fixture.commits.main.slice(0, 10),
      `#/runs?repository_id=${t.repoId}&commit=${t.fixture.commits.main}`,
    ]);
    expect(await last.locator(".commit-author").textContent()).toBe("Fixture Author");
    expect(await last.locator("time").getAttribute("datetime")).toBe("2023-11-14T22:14:20+00:00");
    expect(await last.locator("time").getAttribute("title")).toMatch(/2023/);
    // The fixture commit is from 2023: years ago, in words (src/ui/app/dom.test.ts has the table).
    expect(await last.locator("time").textContent()).toMatch(/^\d+ y ago$/);
    expect(await axe(page)).toEqual([]);
    // An unknown ref on the repository page: the page stays, the error in its place.
    await page.goto(`${t.svc.url}/ui/#/repos/${t.repoId}?ref=no-such-branch`);
    await page.locator("#view-error", { hasText: "no-such-branch" }).waitFor();
    await page.getByRole("heading", { name: "r", exact: true }).waitFor();
    expect(await axe(page)).toEqual([]);
  });

  it("every other page passes axe-core", async () => {
    for (const [hash, ready] of [
      ["#/repos", "Register a repository"],
      [`#/repos/${t.repoId}`, "Run a command at this commit"],
      [`#/repos/${t.repoId}?ref=main&path=README.md`, "Analyses"],
      ["#/keys", "Create a key"],
      ["#/env", "Add a variable"],
      ["#/integrations", "GitHub installations"],
      ["#/oauth", "Applications you allowed"],
    ] as const) {
      await page.goto(`${t.svc.url}/ui/${hash}`);
      await page.getByRole("heading", { name: ready }).waitFor();
      if (hash === "#/repos" || hash === "#/keys" || hash.includes("README"))
        await shot(page, hash === "#/repos" ? "repositories" : hash === "#/keys" ? "keys" : "file");
      if (hash === `#/repos/${t.repoId}`) {
        await page.locator("#last-commit .commit-title").waitFor();
        await shot(page, "repository");
      }
      expect(await axe(page), hash).toEqual([]);
    }
  });

  it("opens the integrations view where the GitHub callback sends the browser", async () => {
    await page.goto(`${t.svc.url}/ui/integrations?status=pending`);
    await page.getByText("waits for an organisation owner's approval").waitFor();
    expect(page.url()).toBe(`${t.svc.url}/ui/#/integrations?status=pending`);
  });

  it("saw no console error, page error or CSP violation", () => {
    expect(problems).toEqual([]);
  });
});
