// The run's phases on the page: an ordered list, one item per phase with its
// name, its duration (or, for the phase in progress, the time so far) and its
// state in words, so it reads the same to a screen reader as it looks (colour
// and borders only repeat what the text says). Times that grow carry
// data-since and are refreshed by tick(), which touches their text alone.

import { h } from "./dom.ts";
import { formatSeconds, type Phase, type PhaseState, type RunPhases } from "./phases.ts";

const STATE_TEXT: Record<PhaseState, string> = {
  done: "done",
  current: "in progress",
  stopped: "ended here",
  upcoming: "not yet",
  "not-reached": "not reached",
};

/** A time that grows: its text is the time since `since`, kept current by tick(). */
export function elapsed(since: string, now: number): HTMLElement {
  return h("span", { class: "elapsed", "data-since": since }, formatSeconds(Math.max(0, now - Date.parse(since)) / 1000));
}

/** Refreshes every growing time under `root`. */
export function tick(root: ParentNode, now = Date.now()): void {
  for (const el of root.querySelectorAll<HTMLElement>("[data-since]")) {
    el.textContent = formatSeconds(Math.max(0, now - Date.parse(el.dataset.since!)) / 1000);
  }
}

function timeOf(p: Phase, now: number): Node | string {
  if (p.state === "current") return p.since ? elapsed(p.since, now) : "";
  if (p.state === "done" || p.state === "stopped") return p.seconds === null ? "time not recorded" : formatSeconds(p.seconds);
  return "";
}

function item(p: Phase, now: number): HTMLLIElement {
  return h(
    "li",
    { class: `phase phase-${p.state}`, "data-phase": p.id, "data-state": p.state, "aria-current": p.state === "current" ? "step" : null },
    h("span", { class: "phase-name" }, p.label),
    " ",
    h("span", { class: "phase-time" }, timeOf(p, now)),
    " ",
    h(
      "span",
      { class: "phase-state" },
      p.state === "done" ? h("span", { "aria-hidden": "true" }, "✓") : null,
      h("span", { class: p.state === "done" ? "sr-only" : "" }, STATE_TEXT[p.state]),
    ),
    p.note ? h("span", { class: "phase-note muted" }, p.note) : null,
  );
}

/** The phase list and, under it, the time to first output. */
export function phaseSection(r: RunPhases, status: string, now: number): HTMLElement {
  const items = r.phases.map((p) => item(p, now));
  if (r.ended)
    items.push(
      h(
        "li",
        { class: "phase phase-ended", "data-phase": "ended", "data-state": "done" },
        h("span", { class: "phase-name" }, "Ended"),
        " ",
        h("span", { class: "phase-time" }, `${status}, ${formatSeconds(r.totalSeconds)} in all`),
      ),
    );
  const first =
    r.firstOutputSinceCreatedSeconds !== null
      ? [
          "Time to first output: ",
          h("strong", {}, formatSeconds(r.firstOutputSinceCreatedSeconds)),
          " after the run was created",
          r.firstOutputSeconds !== null ? ` (${formatSeconds(r.firstOutputSeconds)} after its command started)` : "",
          ".",
        ]
      : [r.ended ? "No output." : "No output yet."];
  return h(
    "section",
    { "aria-labelledby": "phases-heading", class: "phases-section" },
    h("h2", { id: "phases-heading" }, "Phases"),
    h("ol", { class: "phases", id: "phases" }, items),
    h("p", { id: "first-output", class: "muted" }, ...first),
  );
}
