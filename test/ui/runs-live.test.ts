import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { STREAMS_PER_ACCOUNT } from "../../src/domain/runs/run-feed.ts";
import { launchBrowser, UI_TEST_MS, UI_WAIT_MS } from "../helpers/browser.ts";
import { insertRunRow } from "../helpers/seed.ts";
import { twoTenantsWithRepository, type TwoTenants } from "../helpers/two-tenants.ts";

// The runs list in Chromium, kept current by GET /v1/runs/events (issue 35:
// it read the whole list every 3 s): a run's status changes in Postgres (as
// the controller's mirror writes it) and the row changes without a reload,
// with no list read after the first; a new run appears; another account's run
// never does; with the account's streams all taken, the list falls back to
// reading itself every 3 s and still shows the change. axe-core on the page.

const AXE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

let t: TwoTenants;
let browser: Browser;
let page: Page;
/** The list reads (GET /v1/runs?...) the page made, and its stream connections. */
const listReads: string[] = [];
const streams: string[] = [];
const problems: string[] = [];

beforeAll(async () => {
  t = await twoTenantsWithRepository();
  browser = await launchBrowser();
  page = await (await browser.newContext({ viewport: { width: 1200, height: 760 } })).newPage();
  page.setDefaultTimeout(UI_WAIT_MS);
  page.on("request", (r) => {
    const u = new URL(r.url());
    if (u.pathname === "/v1/runs") listReads.push(u.search);
    if (u.pathname === "/v1/runs/events") streams.push(u.search);
  });
  page.on("console", (m) => {
    if (m.type() === "error" && !m.text().startsWith("Failed to load resource: the server responded with a status of")) problems.push(m.text());
  });
  page.on("pageerror", (e) => problems.push(e.message));
  await page.goto(`${t.svc.url}/ui/`);
  await page.locator("#api-key").fill(t.alice.key);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { name: "Repositories" }).waitFor();
}, UI_TEST_MS);

afterAll(async () => {
  await browser?.close();
  await t?.close();
});

async function axe(p: Page): Promise<string[]> {
  await p.evaluate(AXE);
  const found = await p.evaluate<{ id: string; impact: string; nodes: { target: string[] }[] }[]>(
    "axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => ({ target: n.target })) })))",
  );
  return found.filter((v) => v.impact === "serious" || v.impact === "critical").map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
}

const setStatus = (id: string, status: "running" | "completed", rank: number) =>
  t.svc.db
    .updateTable("runs")
    .set({ status, status_rank: rank, ...(status === "running" ? { start_time: new Date() } : { close_time: new Date(), exit_code: 0 }) })
    .where("id", "=", id)
    .execute();

describe("the runs list", { timeout: UI_TEST_MS }, () => {
  it("shows a run's new status, and a new run, without reading the list again", async () => {
    const run = await insertRunRow(t.svc.db, { accountId: t.alice.accountId, repositoryId: t.repoId, status: "pending" });
    listReads.length = 0;
    await page.goto(`${t.svc.url}/ui/#/runs`);
    await page.locator(`[data-run-id="${run}"][data-status="pending"]`).waitFor();
    await page.locator("#runs-live[data-state=live]").waitFor();
    expect(await axe(page)).toEqual([]);
    await setStatus(run, "running", 2);
    await page.locator(`[data-run-id="${run}"][data-status="running"]`).waitFor();
    const added = await insertRunRow(t.svc.db, { accountId: t.alice.accountId, repositoryId: t.repoId, status: "pending" });
    const bobs = await insertRunRow(t.svc.db, { accountId: t.bob.accountId, repositoryId: t.repoId, status: "pending" });
    await page.locator(`[data-run-id="${added}"]`).waitFor();
    await setStatus(run, "completed", 3);
    await page.locator(`[data-run-id="${run}"][data-status="completed"]`).waitFor();
    // Longer than the old 3 s polling would have needed for two reads.
    await new Promise((r) => setTimeout(r, 7000));
    expect(listReads, "the list was read once, when the stream was live").toHaveLength(1);
    expect(await page.locator(`[data-run-id="${bobs}"]`).count()).toBe(0);
    expect(await page.locator(`[data-run-id="${run}"] td`).nth(5).textContent()).toBe("0");
    expect(await axe(page)).toEqual([]);
    expect(problems).toEqual([]);
  });

  it(`falls back to reading the list every 3 s when the account's ${STREAMS_PER_ACCOUNT} streams are taken`, async () => {
    await page.goto(`${t.svc.url}/ui/#/repos`);
    await page.getByRole("heading", { name: "Repositories" }).waitFor();
    const held: AbortController[] = [];
    for (let i = 0; i < STREAMS_PER_ACCOUNT; i++) {
      const ac = new AbortController();
      const res = await t.alice.api("/v1/runs/events", { signal: ac.signal });
      expect(res.status).toBe(200);
      held.push(ac);
    }
    try {
      const run = await insertRunRow(t.svc.db, { accountId: t.alice.accountId, repositoryId: t.repoId, status: "pending" });
      await page.goto(`${t.svc.url}/ui/#/runs`);
      await page.locator("#runs-live[data-state=polling]").waitFor();
      await page.locator(`[data-run-id="${run}"][data-status="pending"]`).waitFor();
      await setStatus(run, "running", 2);
      await page.locator(`[data-run-id="${run}"][data-status="running"]`).waitFor();
      expect(await axe(page)).toEqual([]);
    } finally {
      for (const ac of held) ac.abort();
    }
  });
});
