// A run's attempts (docs/users/runs.md#retries) on its page: "attempt 2 of 3"
// beside the status, and a list of the attempts with how each ended, each
// linking to its first line in the log (`#L<first_seq>`, the log view's own
// anchor), so a reader can jump to where a retried attempt began and why.
// Shown only for a run that can retry or did: a plain run's one attempt says
// nothing its header does not.

import { fmtTime, h } from "./dom.ts";

export interface RunAttempt {
  attempt: number;
  started_at: string | null;
  ended_at: string | null;
  reason: string | null;
  error: string | null;
  first_seq: number;
}

export interface AttemptsOfRun {
  run_id: string;
  run_config: { retries?: number };
  attempts?: RunAttempt[];
}

const retriesOf = (run: AttemptsOfRun) => run.run_config.retries ?? 0;
const attemptsOf = (run: AttemptsOfRun) => run.attempts ?? [];

/** "attempt 2 of 3" (the current one, of the most it may take), or null for a run that neither retries nor did. */
export function attemptNote(run: AttemptsOfRun): string | null {
  const n = attemptsOf(run).length;
  if (retriesOf(run) === 0 && n <= 1) return null;
  return `attempt ${Math.max(1, n)} of ${Math.max(n, retriesOf(run) + 1)}`;
}

/** What the list shows; its text changes only when an attempt does (the page redraws it only then). */
export const attemptsKey = (run: AttemptsOfRun): string => (attemptNote(run) === null ? "" : JSON.stringify(attemptsOf(run)));

export function attemptsSection(run: AttemptsOfRun): HTMLElement | null {
  const attempts = attemptsOf(run);
  if (attemptNote(run) === null || attempts.length === 0) return null;
  return h(
    "section",
    { id: "run-attempts", "aria-labelledby": "run-attempts-heading" },
    h("h2", { id: "run-attempts-heading" }, "Attempts"),
    h(
      "ol",
      {},
      ...attempts.map((a) =>
        h(
          "li",
          { "data-attempt": String(a.attempt) },
          h("a", { href: `#/runs/${encodeURIComponent(run.run_id)}#L${a.first_seq}`, title: `Its log from line ${a.first_seq}` }, `Attempt ${a.attempt}`),
          ` · ${a.reason ?? (a.ended_at ? "ended" : "in progress")}`,
          ` · started ${fmtTime(a.started_at)}`,
          a.ended_at ? ` · ended ${fmtTime(a.ended_at)}` : "",
          a.error ? [": ", h("span", { class: "error" }, a.error)] : "",
        ),
      ),
    ),
  );
}
