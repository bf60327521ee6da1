import { sql } from "kysely";
import type { StateExtra } from "../../db/log-store.ts";
import type { RunTimelineMarksRow } from "../../db/schema.ts";

// The run's `timeline` as the API shows it (design.md, Environments): the
// start-up steps the cluster recorded (mirrored from the Run's status) between
// the columns the row already has, in the order a run goes through them. Only
// steps that happened are listed; their order is the steps' order, not a sort
// by time (container times have whole seconds, so two steps can share one).

export const TIMELINE_EVENTS = [
  "created",
  "admitted",
  "scheduled",
  "image_ready",
  "checked_out",
  "environment_ready",
  "started",
  "first_output",
  "ended",
] as const;
export type TimelineEventName = (typeof TIMELINE_EVENTS)[number];

export interface TimelineEvent {
  event: TimelineEventName;
  at: string;
  /** environment_ready only: restored from the cache (`hit`) or built while the run waited (`built`). */
  cache?: "hit" | "built";
  /** admitted only, for a run that started on a warm pool's pod: true, and which pool. */
  warm?: true;
  pool?: string;
}

export interface TimelineSources {
  created_at: Date;
  timeline: RunTimelineMarksRow | null;
  start_time: Date | null;
  first_output_at: Date | null;
  close_time: Date | null;
  cache: "hit" | "built" | null;
}

export function runTimeline(r: TimelineSources): TimelineEvent[] {
  const marks = r.timeline ?? {};
  const at: Record<TimelineEventName, string | undefined> = {
    created: r.created_at.toISOString(),
    admitted: marks.admitted,
    scheduled: marks.scheduled,
    image_ready: marks.imageReady,
    checked_out: marks.checkedOut,
    environment_ready: marks.environmentReady,
    started: r.start_time?.toISOString(),
    first_output: r.first_output_at?.toISOString(),
    ended: r.close_time?.toISOString(),
  };
  const events: TimelineEvent[] = [];
  for (const event of TIMELINE_EVENTS) {
    const when = at[event];
    if (when === undefined) continue;
    if (event === "environment_ready" && r.cache) events.push({ event, at: when, cache: r.cache });
    else if (event === "admitted" && marks.warm) events.push({ event, at: when, warm: true, ...(marks.pool && { pool: marks.pool }) });
    else events.push({ event, at: when });
  }
  return events;
}

/**
 * What a run's log stream reads of its row, with its status, for its `timeline` events
 * (src/db/log-store.ts): runTimeline's sources, so the stream and GET /v1/runs/{id} never differ.
 */
export const RUN_STREAM_TIMELINE: StateExtra = {
  select: ["created_at", "timeline", "start_time", "first_output_at", "close_time", sql<string | null>`environment->>'cache'`.as("environment_cache")],
  state: (row) => ({
    timeline: runTimeline({
      created_at: row.created_at as Date,
      timeline: row.timeline as RunTimelineMarksRow | null,
      start_time: row.start_time as Date | null,
      first_output_at: row.first_output_at as Date | null,
      close_time: row.close_time as Date | null,
      cache: (row.environment_cache as "hit" | "built" | null) ?? null,
    }),
  }),
};
