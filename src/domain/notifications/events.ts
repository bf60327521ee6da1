// Which notification event a terminal status is (pure). Runs report each of
// their three endings; an analysis reports completing or failing (a cancelled
// analysis was asked to stop by its owner, as a deleted one was).

export const NOTIFICATION_EVENTS = ["run.completed", "run.failed", "run.cancelled", "analysis.completed", "analysis.failed"] as const;
export type NotificationEvent = (typeof NOTIFICATION_EVENTS)[number];

export type SubjectKind = "run" | "analysis";

const KNOWN: ReadonlySet<string> = new Set(NOTIFICATION_EVENTS);

/** The event a workload of `kind` reaching `phase` fires, or null (a live phase, or an ending nobody subscribes to). */
export function eventFor(kind: SubjectKind, phase: string): NotificationEvent | null {
  const name = `${kind}.${phase}`;
  return KNOWN.has(name) ? (name as NotificationEvent) : null;
}

/** The subject kind a workload table's rows are. */
export const subjectKindOf = (table: "runs" | "analyses"): SubjectKind => (table === "runs" ? "run" : "analysis");
