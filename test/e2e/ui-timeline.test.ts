import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { formatSeconds } from "../../src/ui/app/phases.ts";
import { axeViolations } from "../helpers/axe.ts";
import { launchBrowser, UI_WAIT_MS } from "../helpers/browser.ts";
import { until } from "../helpers/cluster.ts";
import { startE2E, type E2E } from "../helpers/e2e.ts";

// The run page's phases for a real run (issue 32: "the dashboard shows a bar
// per phase"), in Chromium: a run executes on the local cluster, and the page
// shows one item per phase, in the timeline's order, each done with the
// duration the API's `timeline` gives (the difference of its two events,
// worked out here from the API's answer, not from the page's own code), and
// the whole run from creation to end; axe-core finds nothing serious.

let e: E2E;
let browser: Browser;
let page: Page;
const problems: string[] = [];

beforeAll(async () => {
  e = await startE2E("cp-e2e-uitl");
  browser = await launchBrowser();
  page = await (await browser.newContext()).newPage();
  page.on("pageerror", (err) => problems.push(err.message));
  await page.goto(`${e.svc.url}/ui/`);
  await page.locator("#api-key").fill(e.alice.key);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { name: "Repositories" }).waitFor();
});
afterAll(async () => {
  await browser?.close();
  await e?.close();
});

/** The phases a run without an environment goes through: [id, the event it starts at, the event it ends at]. */
const PHASES = [
  ["queued", "created", "admitted"],
  ["scheduling", "admitted", "scheduled"],
  ["image", "scheduled", "image_ready"],
  ["checkout", "image_ready", "checked_out"],
  ["command", "started", "ended"],
] as const;

describe("the run page's phases for a real run", () => {
  it("shows every phase in order with the durations of the API's timeline", { timeout: 600_000 }, async () => {
    const res = await e.alice.api(`/v1/repositories/${e.repoId}/main/runs`, {
      method: "POST",
      json: { command: ["sh", "-c", "echo first; sleep 2; echo last"], environment: "none" },
    });
    expect(res.status, await res.clone().text()).toBe(201);
    const runId = (await res.json()).run_id as string;
    const run = await until("the run to end with its whole timeline", 300_000, async () => {
      const r = await (await e.alice.api(`/v1/runs/${runId}`)).json();
      return r.status === "completed" && r.timeline.some((x: { event: string }) => x.event === "ended") ? r : undefined;
    });

    // A real run records every step (an environment of "none" has no environment step).
    const at = new Map<string, number>((run.timeline as { event: string; at: string }[]).map((x) => [x.event, Date.parse(x.at)]));
    expect([...at.keys()]).toEqual(["created", "admitted", "scheduled", "image_ready", "checked_out", "started", "first_output", "ended"]);
    // In order, within the kubelet's whole seconds (the cluster's times have no fractions; created has).
    const times = [...at.values()];
    for (let i = 1; i < times.length; i++) expect(times[i]!, [...at.keys()][i]).toBeGreaterThanOrEqual(times[i - 1]! - 1000);

    await page.goto(`${e.svc.url}/ui/#/runs/${runId}`);
    await page.getByRole("heading", { name: `Run ${runId}` }).waitFor({ timeout: UI_WAIT_MS });
    await page.locator('#phases > li[data-phase="ended"]').waitFor({ timeout: UI_WAIT_MS });
    const shown = await page.locator("#phases > li").evaluateAll((els) =>
      els.map((el) => ({
        phase: el.getAttribute("data-phase"),
        state: el.getAttribute("data-state"),
        time: el.querySelector(".phase-time")?.textContent ?? "",
      })),
    );
    // Container times can make a later step read a little earlier: a phase never lasts less than 0.
    const seconds = (from: string, to: string) => Math.max(0, (at.get(to)! - at.get(from)!) / 1000);
    expect(shown).toEqual([
      ...PHASES.map(([phase, from, to]) => ({ phase, state: "done", time: formatSeconds(seconds(from, to)) })),
      { phase: "ended", state: "done", time: `completed, ${formatSeconds(seconds("created", "ended"))} in all` },
    ]);
    // The command's phase took at least its sleep: the figures are the run's, not placeholders.
    expect(seconds("started", "ended")).toBeGreaterThanOrEqual(2);
    expect(await page.locator("#run-phase").count(), "no phase in progress once it ended").toBe(0);
    expect(await axeViolations(page)).toEqual([]);
    expect(problems).toEqual([]);
  });
});
