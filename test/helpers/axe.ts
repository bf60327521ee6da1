import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { Page } from "playwright-core";

// axe-core in a page, for the Chromium tests: the serious and critical
// violations, one line each. Evaluated over the DevTools protocol, so the
// page's CSP is not loosened for it.

const AXE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

export async function axeViolations(p: Page): Promise<string[]> {
  await p.evaluate(AXE);
  const found = await p.evaluate<{ id: string; impact: string; nodes: { target: string[] }[] }[]>(
    "axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => ({ target: n.target })) })))",
  );
  return found
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
}
