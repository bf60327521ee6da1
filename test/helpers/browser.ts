import { chromium, type Browser } from "playwright-core";

// The browser every UI and sign-in test drives: Debian's Chromium (.ci/run
// installs it), through playwright-core, which downloads no browser of its own.

export const CHROMIUM = "/usr/bin/chromium";

/** A headless Chromium; `args` are added to the flags every test needs. Close it when done. */
export function launchBrowser(args: string[] = []): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", ...args], headless: true });
}

/**
 * How long one UI step may wait for the page: a locator's `waitFor` (and every
 * action's auto-wait) is woken by the page's own changes, so a generous deadline
 * costs nothing when the page is quick and spares a loaded machine a timeout
 * (issue 29: `#file-content` was not filled within expect.poll's 1 s default).
 */
export const UI_WAIT_MS = 60_000;

/** A whole UI test: several steps, each of which may take seconds on a loaded machine. */
export const UI_TEST_MS = 240_000;
