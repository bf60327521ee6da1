import { chromium, type Browser } from "playwright-core";

// The browser every UI and sign-in test drives: Debian's Chromium (.ci/run
// installs it), through playwright-core, which downloads no browser of its own.

export const CHROMIUM = "/usr/bin/chromium";

/** A headless Chromium; `args` are added to the flags every test needs. Close it when done. */
export function launchBrowser(args: string[] = []): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", ...args], headless: true });
}
