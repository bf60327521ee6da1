import type { Browser, Page } from "playwright-core";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser, UI_TEST_MS, UI_WAIT_MS } from "../helpers/browser.ts";
import { insertRunRow } from "../helpers/seed.ts";
import { twoTenantsWithRepository, type TwoTenants } from "../helpers/two-tenants.ts";

// The run page holds a whole run: a 100,000-line run written into Postgres as
// the archiver writes it, opened in Chromium at its last line, at its first and
// at an anchor, searched for a line 90,000 lines back, filtered, its first error
// found and its whole log downloaded, with only the rows in view in the DOM and
// the log read a block at a time. Times are printed; what is asserted is what the
// page does to get there (how many reads, how many rows), which a loaded machine
// does not change.

const LINES = 100_000;
const AXE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

let t: TwoTenants;
let browser: Browser;
let page: Page;
let runId: string;
const problems: string[] = [];
/** The log reads the page made (paths under /logs, the stream and the group markers' list aside). */
const reads: string[] = [];
/** The page's reads of the group markers (GET .../logs/groups). */
const groupReads: string[] = [];

beforeAll(async () => {
  t = await twoTenantsWithRepository();
  runId = await insertRunRow(t.svc.db, { accountId: t.alice.accountId, repositoryId: t.repoId, status: "failed", logsComplete: true, set: { exit_code: 1 } });
  // Every 100th line on stderr; the line to search for 90,000 lines before the end.
  await sql`insert into run_log_lines (run_id, seq, stream, ts, line)
    select ${runId}::uuid, g, case when g % 100 = 0 then 'stderr' else 'stdout' end, timestamptz '2026-11-22T10:00:00Z' + g * interval '1 ms',
      case when g = 10000 then 'checkpoint written to /tmp/ckpt-7f3a' when g % 100 = 0 then 'warning ' || g else 'step ' || g || ' loss=0.' || (g % 997) end
    from generate_series(1, ${LINES}) g`.execute(t.svc.db);
  browser = await launchBrowser();
  const context = await browser.newContext({ acceptDownloads: true, viewport: { width: 1200, height: 760 } });
  page = await context.newPage();
  page.setDefaultTimeout(UI_WAIT_MS);
  page.on("console", (m) => {
    // The signed-out first load's 401 (GET /ui/session) is the browser's own message, as in pages.test.ts.
    if (m.type() === "error" && !m.text().startsWith("Failed to load resource: the server responded with a status of 401")) problems.push(m.text());
  });
  page.on("pageerror", (e) => problems.push(e.message));
  page.on("request", (r) => {
    const u = new URL(r.url());
    if (!u.pathname.startsWith(`/v1/runs/${runId}/logs`) || u.pathname.endsWith("/stream")) return;
    const read = `${u.pathname.slice(`/v1/runs/${runId}/logs`.length)}${u.search}`;
    (read.startsWith("/groups") ? groupReads : reads).push(read);
  });
  await page.goto(`${t.svc.url}/ui/`);
  await page.locator("#api-key").fill(t.alice.key);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { name: "Repositories" }).waitFor();
}, UI_TEST_MS);

afterAll(async () => {
  await browser?.close();
  await t?.close();
});

/** Whether the line's row is inside the log's visible box. */
const inView = (seq: number) =>
  page.evaluate<boolean>(`(() => {
    const l = document.getElementById("log").getBoundingClientRect();
    const r = document.getElementById("L${seq}")?.getBoundingClientRect();
    return !!r && r.top >= l.top - 1 && r.bottom <= l.bottom + 1;
  })()`);
const rowsInDom = () => page.locator("#log .l").count();

describe("a 100,000-line run", { timeout: UI_TEST_MS }, () => {
  it("opens at its last line after one read, with only the rows in view in the DOM", async () => {
    reads.length = 0;
    groupReads.length = 0;
    const t0 = Date.now();
    await page.goto(`${t.svc.url}/ui/#/runs/${runId}`);
    await page.locator(`#L${LINES}`).waitFor();
    console.log(`the last line of ${LINES} shown ${Date.now() - t0} ms after the navigation started (page load included)`);
    await expect.poll(() => inView(LINES), { timeout: UI_WAIT_MS }).toBe(true); // scrolled into view on the next frame
    expect(reads).toEqual([`?before=${Number.MAX_SAFE_INTEGER}&limit=1000`]);
    // And the group markers' list (an index read: this log has none).
    await page.locator("section[data-groups='0']").waitFor();
    expect(groupReads).toEqual(["/groups?after=0&limit=5000"]);
    expect(await rowsInDom()).toBeLessThan(120);
    await page.locator("#log-info", { hasText: /^100000 lines ·/ }).waitFor();
    await page.locator("#log-state", { hasText: "ended: failed, exit code 1" }).waitFor();
  });

  it("goes to its first line with one more read", async () => {
    reads.length = 0;
    const t0 = Date.now();
    await page.locator("#log-top").click();
    await page.locator("#L1").waitFor();
    console.log(`the first line shown ${Date.now() - t0} ms after the click`);
    await expect.poll(() => inView(1), { timeout: UI_WAIT_MS }).toBe(true); // scrolled into view on the next frame
    expect(await page.locator("#L1").textContent()).toBe("110:00:00.001step 1 loss=0.1");
    expect(reads).toEqual(["?after=0&limit=1000"]);
    expect(await page.locator("#log-follow").isChecked()).toBe(false);
  });

  it("opens at an anchor, and a line's number makes its anchor", async () => {
    reads.length = 0;
    await page.goto(`${t.svc.url}/ui/#/runs/${runId}#L54321`);
    await page.locator("#L54321.anchored").waitFor();
    await expect.poll(() => inView(54321), { timeout: UI_WAIT_MS }).toBe(true); // scrolled into view on the next frame
    expect(reads).toEqual(["?after=54000&limit=1000"]);
    await page.locator("#L54330 .n").click();
    await page.locator("#L54330.anchored").waitFor();
    expect(new URL(page.url()).hash).toBe(`#/runs/${runId}#L54330`);
    // The address is shareable: a reload opens there.
    await page.reload();
    await page.locator("#L54330.anchored").waitFor();
    await expect.poll(() => inView(54330), { timeout: UI_WAIT_MS }).toBe(true); // scrolled into view on the next frame
  });

  it("finds a line 90,000 lines back through the server's search, highlighted and scrolled to", async () => {
    await page.locator("#log-end").click();
    await page.locator(`#L${LINES}`).waitFor();
    reads.length = 0;
    await page.locator("#log-search").fill("CKPT-7F3A");
    await page.locator("#log-search-info", { hasText: "match 1 of 1, line 10000" }).waitFor();
    await page.locator("#L10000 mark", { hasText: "ckpt-7f3a" }).waitFor();
    await expect.poll(() => inView(10000), { timeout: UI_WAIT_MS }).toBe(true); // scrolled into view on the next frame
    expect(reads.filter((r) => r.startsWith("/search"))).toEqual(["/search?q=CKPT-7F3A&after=0&limit=500"]);
    await page.locator("#log-search").fill("no such text");
    await page.locator("#log-search-info", { hasText: "no match in the whole log" }).waitFor();
    await page.locator("#log-search").fill("");
  });

  it("filters to one stream, and finds the first error", async () => {
    await page.locator("#log-filter").selectOption("stderr");
    await page.locator("#log-info", { hasText: /^1000 stderr lines ·/ }).waitFor();
    // The rows' blocks are read as they come into view.
    await expect.poll(() => page.locator("#log .pending").count(), { timeout: UI_WAIT_MS }).toBe(0);
    const streams = await page.locator("#log .l").evaluateAll((els) => els.map((el) => el.getAttribute("data-stream")));
    expect(streams.length).toBeGreaterThan(10);
    expect(new Set(streams)).toEqual(new Set(["stderr"]));
    await page.locator("#log-filter").selectOption("both");
    await page.locator("#log-info", { hasText: /^100000 lines ·/ }).waitFor();
    await page.locator("#log-first-error").click();
    await page.locator("#L100.anchored").waitFor();
    await expect.poll(() => inView(100), { timeout: UI_WAIT_MS }).toBe(true); // scrolled into view on the next frame
    expect(await page.locator("#L100").getAttribute("data-stream")).toBe("stderr");
  });

  it("downloads the whole log, both streams in order", async () => {
    const [download] = await Promise.all([page.waitForEvent("download"), page.locator("#download-all").click()]);
    const text = readFileSync(await download.path(), "utf8");
    const lines = text.split("\n");
    expect(lines.length).toBe(LINES + 1);
    expect(lines[0]).toBe("step 1 loss=0.1");
    expect(lines[99]).toBe("warning 100");
    expect(lines[LINES - 1]).toBe(`warning ${LINES}`);
  });

  it("follows a running run: live lines appended at the end, in view, each once, then its end", async () => {
    const live = await insertRunRow(t.svc.db, { accountId: t.alice.accountId, repositoryId: t.repoId, status: "running" });
    const write = (from: number, to: number) =>
      sql`insert into run_log_lines (run_id, seq, stream, ts, line)
        select ${live}::uuid, g, case when g % 7 = 0 then 'stderr' else 'stdout' end, now(), 'live ' || g from generate_series(${from}::int, ${to}::int) g`.execute(
        t.svc.db,
      );
    await write(1, 5000);
    await page.goto(`${t.svc.url}/ui/#/runs/${live}`);
    await page.locator("#L5000").waitFor();
    await page.locator("#log-state", { hasText: "live" }).waitFor();
    // 3,000 more in batches while the page follows (the service without a cluster polls Postgres for them).
    for (let from = 5001; from <= 8000; from += 500) {
      await write(from, from + 499);
      await new Promise((r) => setTimeout(r, 100));
    }
    await t.svc.db.updateTable("runs").set({ status: "completed", status_rank: 3, exit_code: 0, logs_complete: true }).where("id", "=", live).execute();
    await page.locator("#log-state", { hasText: "ended: completed, exit code 0" }).waitFor();
    await page.locator("#L8000").waitFor();
    await expect.poll(() => inView(8000), { timeout: UI_WAIT_MS }).toBe(true); // scrolled into view on the next frame
    const section = page.locator("section[data-received]");
    const d = {
      received: await section.getAttribute("data-received"),
      duplicates: await section.getAttribute("data-duplicates"),
      lastSeq: await section.getAttribute("data-last-seq"),
    };
    expect(d).toEqual({ received: "3000", duplicates: "0", lastSeq: "8000" });
    await page.locator("#log-info", { hasText: /^8000 lines ·/ }).waitFor();
    expect(await page.locator("#log-follow").isChecked()).toBe(true);
    // Scrolling back reads the lines that came live from the store as well: every row is there once.
    await page.locator("#log-top").click();
    await page.locator("#L1").waitFor();
  });

  it("folds the groups a run marked (::group:: / ::endgroup::), opens one on a click, and one an anchor points into", async () => {
    const id = await insertRunRow(t.svc.db, {
      accountId: t.alice.accountId,
      repositoryId: t.repoId,
      status: "completed",
      logsComplete: true,
      set: { exit_code: 0 },
    });
    // 3,000 lines: "Install" is 10 (its lines 11-509, its ::endgroup:: 510), "Train" is 600 (601-2499, ::endgroup:: 2500).
    await sql`insert into run_log_lines (run_id, seq, stream, ts, line)
      select ${id}::uuid, g, 'stdout', now(),
        case g when 10 then '::group::Install' when 510 then '::endgroup::' when 600 then '::group::Train' when 2500 then '::endgroup::' else 'text ' || g end
      from generate_series(1, 3000) g`.execute(t.svc.db);
    await page.goto(`${t.svc.url}/ui/#/runs/${id}`);
    await page.locator("#L3000").waitFor();
    await page.locator("section[data-groups='2']").waitFor();
    // 3,000 lines less the 2,400 inside the two groups.
    await page.locator("#log-info", { hasText: /^600 lines ·/ }).waitFor();
    await page.locator("#log-top").click();
    const install = page.getByRole("button", { name: "Show the lines of group Install" });
    await install.waitFor();
    expect(await page.locator("#L10").textContent()).toContain("Install (500 lines)");
    expect(await page.locator("#L11").count()).toBe(0);
    // The row after the title is the line after the group.
    expect(await page.locator("#L10 + .l").getAttribute("data-seq")).toBe("511");
    await install.click();
    await page.locator("#L11").waitFor();
    expect(await page.getByRole("button", { name: "Hide the lines of group Install" }).getAttribute("aria-expanded")).toBe("true");
    await page.locator("#log-info", { hasText: /^1100 lines ·/ }).waitFor();
    // An anchor inside the closed group opens it and shows the line.
    await page.goto(`${t.svc.url}/ui/#/runs/${id}#L1234`);
    await page.locator("#L1234.anchored").waitFor();
    await expect.poll(() => inView(1234), { timeout: UI_WAIT_MS }).toBe(true);
    // Train open (its lines back), Install still closed: 3,000 less Install's 500.
    await page.locator("#log-info", { hasText: /^2500 lines ·/ }).waitFor();
    await page.locator("#L1233").waitFor();
  });

  it("folds a group that ends while the page follows the run", async () => {
    const id = await insertRunRow(t.svc.db, { accountId: t.alice.accountId, repositoryId: t.repoId, status: "running" });
    const write = (from: number, to: number, text: string) =>
      sql`insert into run_log_lines (run_id, seq, stream, ts, line) select ${id}::uuid, g, 'stdout', now(), ${text} from generate_series(${from}::int, ${to}::int) g`.execute(
        t.svc.db,
      );
    await write(1, 1, "::group::Download");
    await write(2, 10, "downloading");
    await page.goto(`${t.svc.url}/ui/#/runs/${id}`);
    await page.locator("#log-state", { hasText: "live" }).waitFor();
    // Still being written: open, and its button cannot close it.
    expect(await page.locator("#L1 .fold").isDisabled()).toBe(true);
    await page.locator("#L10").waitFor();
    await write(11, 11, "::endgroup::");
    await write(12, 12, "done");
    await page.locator("#L12").waitFor();
    await page.locator("#L1 .fold[aria-expanded='false']").waitFor();
    await page.locator("#log-info", { hasText: /^2 lines/ }).waitFor();
    expect(await page.locator("#L2").count()).toBe(0);
    await t.svc.db.updateTable("runs").set({ status: "completed", status_rank: 3, exit_code: 0, logs_complete: true }).where("id", "=", id).execute();
    await page.locator("#log-state", { hasText: "ended: completed" }).waitFor();
  });

  it("follows a retried run into its next attempt: its lines are the rows after the lost attempt's, its open group ends with it", async () => {
    const id = await insertRunRow(t.svc.db, { accountId: t.alice.accountId, repositoryId: t.repoId, status: "running" });
    const write = (from: number, to: number, text: string, stream = "stdout") =>
      sql`insert into run_log_lines (run_id, seq, stream, ts, line) select ${id}::uuid, g, ${stream}, now(), ${text} || ' ' || g from generate_series(${from}::int, ${to}::int) g`.execute(
        t.svc.db,
      );
    // Attempt 1: 20 lines, a group opened at 5 that its lost pod never closed.
    await write(1, 4, "before");
    await write(5, 5, "::group::Train");
    await write(6, 20, "epoch");
    await page.goto(`${t.svc.url}/ui/#/runs/${id}`);
    await page.locator("#log-state", { hasText: "live" }).waitFor();
    await page.locator("#L20").waitFor();
    // Attempt 2 (docs/users/runs.md#retries): codeplane's marker at 1e9, then its own lines.
    await write(1e9, 1e9, "[codeplane] attempt 2 of 2 started: attempt 1 failed (PodLost):", "stderr");
    await write(1e9 + 1, 1e9 + 30, "again");
    await page.locator(`#L${1e9 + 30}`).waitFor();
    await expect.poll(() => inView(1e9 + 30), { timeout: UI_WAIT_MS }).toBe(true);
    // 20 + 31 lines less the group's 15 inner lines (it ended with attempt 1 and folded).
    await page.locator("#log-info", { hasText: /^36 lines/ }).waitFor();
    expect(await page.locator("#log .spacer").evaluate((e) => e.getBoundingClientRect().height)).toBe(36 * 18);
    expect(await page.locator("#log-follow").isChecked()).toBe(true);
    await t.svc.db.updateTable("runs").set({ status: "completed", status_rank: 3, exit_code: 0, logs_complete: true }).where("id", "=", id).execute();
    await page.locator("#log-state", { hasText: "ended: completed" }).waitFor();
    await page.locator("#log-top").click();
    expect(await page.locator("#L5").textContent()).toContain("Train 5 (15 lines)");
    expect(await page.locator("#L5 + .l").getAttribute("data-seq")).toBe(String(1e9));
    // Opened again, at the end and at attempt 2's first line, the rows are the same.
    await page.goto(`${t.svc.url}/ui/#/runs/${id}#L${1e9}`);
    await page.locator(`#L${1e9}.anchored`).waitFor();
    await expect.poll(() => inView(1e9), { timeout: UI_WAIT_MS }).toBe(true);
    await page.locator("#log-info", { hasText: /^36 lines/ }).waitFor();
    expect(await page.locator(`#L${1e9} + .l`).getAttribute("data-seq")).toBe(String(1e9 + 1));
    expect(await page.locator(`#L${1e9}`).evaluate((e) => e.previousElementSibling?.getAttribute("data-seq"))).toBe("5");
    // The whole log, downloaded: both attempts' lines, in order, nothing between them.
    const [download] = await Promise.all([page.waitForEvent("download"), page.locator("#download-all").click()]);
    const lines = readFileSync(await download.path(), "utf8").split("\n");
    expect(lines.length).toBe(51 + 1);
    expect([lines[19], lines[20], lines[21], lines[50]]).toEqual([
      "epoch 20",
      "[codeplane] attempt 2 of 2 started: attempt 1 failed (PodLost): 1000000000",
      "again 1000000001",
      "again 1000000030",
    ]);
  });

  it("keeps the header on cancelled when the cancel response, older than the streamed status, comes after it", async () => {
    const id = await insertRunRow(t.svc.db, { accountId: t.alice.accountId, repositoryId: t.repoId, status: "running" });
    // What POST /cancel answers: the run as it was when the cancel was asked for (this service has no cluster to
    // cancel on, so the test answers for it, in that form, and holds the answer until the stream has said more).
    const asked = await (await t.alice.api(`/v1/runs/${id}`)).json();
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    await page.route(`**/v1/runs/${id}/cancel`, async (route) => {
      await held;
      await route.fulfill({ status: 202, contentType: "application/json", body: JSON.stringify(asked) });
    });
    // The page's reads of the run, to know when none is in flight any more.
    let reading = 0;
    const isRead = (r: { url(): string; method(): string }) => r.method() === "GET" && new URL(r.url()).pathname === `/v1/runs/${id}`;
    page.on("request", (r) => void (isRead(r) && reading++));
    page.on("requestfinished", (r) => void (isRead(r) && reading--));
    page.on("requestfailed", (r) => void (isRead(r) && reading--));
    await page.goto(`${t.svc.url}/ui/#/runs/${id}`);
    await page.locator("#run-head [data-status=running]").waitFor();
    await page.getByRole("button", { name: "Cancel run" }).click();
    // Meanwhile the run is cancelled, as the controller records it; the stream says so and the header follows.
    await t.svc.db.updateTable("runs").set({ status: "cancelled", status_rank: 3, close_time: new Date(), logs_complete: true }).where("id", "=", id).execute();
    await page.locator("#run-head [data-status=cancelled]").waitFor();
    await page.locator("#log-state", { hasText: "ended: cancelled" }).waitFor();
    // Every read the stream's events started has been answered: the cancel response is the last word.
    await expect.poll(() => reading, { timeout: UI_WAIT_MS }).toBe(0);
    release();
    await page.locator("#cancel-note", { hasText: "Cancellation requested" }).waitFor();
    expect(await page.locator("#run-head [data-status]").first().getAttribute("data-status")).toBe("cancelled");
    expect(await page.getByRole("button", { name: "Cancel run" }).count()).toBe(0);
    await page.unroute(`**/v1/runs/${id}/cancel`);
  });

  it("passes axe-core and saw no console error, page error or CSP violation", async () => {
    await page.evaluate(AXE);
    const found = await page.evaluate<{ id: string; impact: string; nodes: string[] }[]>(
      "axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => n.target.join(' ')) })))",
    );
    expect(found.filter((v) => v.impact === "serious" || v.impact === "critical")).toEqual([]);
    expect(problems).toEqual([]);
  });
});
