// A run's phases, derived from its `timeline` (design.md, Environments): the
// steps the cluster recorded, in their fixed order. Pure (no DOM), so the run
// page and the runs list share it and it is tested by a table (phases.test.ts).
//
// Each phase runs from the event that ends the phase before it to its own
// event (the command from `started` to `ended`); its duration is the
// difference of the two, or unknown (null) when either was not recorded. A
// phase whose own event is missing is still done once a later one happened.
// While the run goes on, the first phase not done is the current one, timed
// from the last event before it; a finished run's first phase not done is the
// one it ended in, and the phases after it were never reached.
//
// The wait for an environment's build happens before the run's Job is made
// (it is not admitted meanwhile), so the first phase is "Building
// environment" while a `preprocessing` run with an environment key, no `cache`
// and no `admitted` event waits for it; once run, the environment phase is the
// restore, "cached" for a hit and "built" for a run that waited for its build.

export type TimelineEventName =
  "created" | "admitted" | "scheduled" | "image_ready" | "checked_out" | "environment_ready" | "started" | "first_output" | "ended";

export interface TimelineEvent {
  event: TimelineEventName;
  at: string;
  /** environment_ready only. */
  cache?: "hit" | "built";
}

/** What of a run (GET /v1/runs/{id}, or a list item) the phases are read from. */
export interface PhasedRun {
  status: string;
  created_at: string;
  start_time?: string | null;
  close_time?: string | null;
  environment?: { key: string | null; cache: "hit" | "built" | null } | null;
  /** Absent from servers older than the timeline: then only creation and end are known. */
  timeline?: TimelineEvent[];
}

export type PhaseId = "queued" | "scheduling" | "image" | "checkout" | "environment" | "command";

/**
 * done: over (its duration may be unknown); current: in progress; stopped: the
 * finished run ended during it; upcoming: not yet (the run goes on);
 * not-reached: the finished run never got to it.
 */
export type PhaseState = "done" | "current" | "stopped" | "upcoming" | "not-reached";

export interface Phase {
  id: PhaseId;
  label: string;
  state: PhaseState;
  /** When it began (ISO), if known. A current phase's elapsed time counts from here. */
  since: string | null;
  /** Seconds it took (done), or lasted until the run ended (stopped); null when unknown, in progress or not reached. */
  seconds: number | null;
  /** A note beside the label (e.g. that the wait was the environment's build). */
  note: string | null;
}

export interface RunPhases {
  phases: Phase[];
  /** The phase in progress (null once the run has ended). */
  current: Phase | null;
  /** What the run is doing now, for a header: the current phase's label, or the final status. */
  headline: string;
  /** When the run ended (ISO), if it has. */
  ended: string | null;
  /** Creation to end, or to `now` while it goes on. */
  totalSeconds: number;
  /** From the command's start to its first line of output; null when either is unknown. */
  firstOutputSeconds: number | null;
  /** From the run's creation to its first line of output. */
  firstOutputSinceCreatedSeconds: number | null;
}

export const FINISHED = new Set(["completed", "failed", "cancelled"]);

interface PhaseDef {
  id: PhaseId;
  /** The event it begins with (the previous phase's end), and the one that ends it. */
  from: TimelineEventName;
  to: TimelineEventName;
  label: string;
}

const DEFS: readonly PhaseDef[] = [
  { id: "queued", from: "created", to: "admitted", label: "Queued" },
  { id: "scheduling", from: "admitted", to: "scheduled", label: "Scheduling" },
  { id: "image", from: "scheduled", to: "image_ready", label: "Image" },
  { id: "checkout", from: "image_ready", to: "checked_out", label: "Checkout" },
  { id: "environment", from: "checked_out", to: "environment_ready", label: "Environment" },
  { id: "command", from: "started", to: "ended", label: "Command" },
];

/** Events that show the run got past a phase (ended does not: a run can end in any phase). */
const PROGRESS: readonly TimelineEventName[] = ["admitted", "scheduled", "image_ready", "checked_out", "environment_ready", "started", "first_output"];

const ms = (iso: string | null | undefined): number | null => {
  if (!iso) return null;
  const t = Date.parse(iso);
  return Number.isNaN(t) ? null : t;
};

/** Seconds between two times, never negative (container times have whole seconds, so a later step can read a little earlier). */
const between = (from: number | null, to: number | null): number | null => (from === null || to === null ? null : Math.max(0, (to - from) / 1000));

/** Whether the run waits, right now, for its environment's build (the contract's definition). */
export function waitsForBuild(run: PhasedRun): boolean {
  const env = run.environment;
  return run.status === "preprocessing" && !!env?.key && !env.cache && !(run.timeline ?? []).some((e) => e.event === "admitted");
}

type Times = Map<TimelineEventName, number>;

/** When each event happened (the first of each), with the columns a timeline repeats as fallbacks; and the environment's cache. */
function timesOf(run: PhasedRun): { at: Times; cache: "hit" | "built" | null } {
  const at: Times = new Map();
  let cache: "hit" | "built" | null = run.environment?.cache ?? null;
  for (const e of run.timeline ?? []) {
    const t = ms(e.at);
    if (t !== null && !at.has(e.event)) at.set(e.event, t);
    if (e.event === "environment_ready" && e.cache) cache = e.cache;
  }
  const fallback = (event: TimelineEventName, iso: string | null | undefined, when: boolean) => {
    const t = ms(iso);
    if (when && t !== null && !at.has(event)) at.set(event, t);
  };
  fallback("created", run.created_at, true);
  // A server older than the timeline: the command's start and the end are still known.
  fallback("started", run.start_time, !run.timeline);
  fallback("ended", run.close_time, FINISHED.has(run.status));
  return { at, cache };
}

/** Whether a phase is over: its end was recorded, or something after it happened. */
function isDone(d: PhaseDef, at: Times): boolean {
  if (d.id === "command") return at.has("started") && at.has("ended");
  return at.has(d.to) || PROGRESS.some((e) => PROGRESS.indexOf(e) > PROGRESS.indexOf(d.to) && at.has(e));
}

function phaseOf(d: PhaseDef, state: PhaseState, at: Times, cache: "hit" | "built" | null, waiting: boolean): Phase {
  const ended = at.get("ended") ?? null;
  const from = at.get(d.from) ?? null;
  // A current or stopped phase whose beginning was not recorded counts from the last event before it.
  const since = from ?? (state === "current" || state === "stopped" ? lastBefore(at, d.from) : null);
  const to = d.id === "command" ? ended : (at.get(d.to) ?? null);
  return {
    id: d.id,
    label: labelOf(d, state, cache, waiting),
    state,
    since: since === null ? null : new Date(since).toISOString(),
    seconds: state === "done" ? between(from, to) : state === "stopped" ? between(since, ended) : null,
    note: noteOf(d, state, cache, waiting),
  };
}

export function runPhases(run: PhasedRun, now: number): RunPhases {
  const { at, cache } = timesOf(run);
  const ended = at.get("ended") ?? null;
  const finished = FINISHED.has(run.status) || ended !== null;
  const hasEnv = !!run.environment?.key;
  const waiting = waitsForBuild(run);

  const phases: Phase[] = [];
  let open = false; // a phase before this one is current or stopped
  for (const d of DEFS.filter((x) => x.id !== "environment" || hasEnv)) {
    const state: PhaseState = open ? (finished ? "not-reached" : "upcoming") : isDone(d, at) ? "done" : finished ? "stopped" : "current";
    if (state === "current" || state === "stopped") open = true;
    phases.push(phaseOf(d, state, at, cache, waiting));
  }

  const current = phases.find((p) => p.state === "current") ?? null;
  const created = at.get("created") ?? null;
  const first = at.get("first_output") ?? null;
  return {
    phases,
    current,
    headline: current ? current.label : run.status,
    ended: ended === null ? null : new Date(ended).toISOString(),
    totalSeconds: between(created, ended ?? now) ?? 0,
    firstOutputSeconds: between(at.get("started") ?? null, first),
    firstOutputSinceCreatedSeconds: between(created, first),
  };
}

/** The time of the latest recorded event up to `event` in the timeline's order (created counts). */
function lastBefore(at: Times, event: TimelineEventName): number | null {
  const chain: TimelineEventName[] = ["created", ...PROGRESS.slice(0, PROGRESS.indexOf("first_output"))];
  const idx = event === "created" ? 0 : chain.indexOf(event);
  for (let i = idx; i >= 0; i--) {
    const t = at.get(chain[i]!);
    if (t !== undefined) return t;
  }
  return null;
}

function labelOf(d: PhaseDef, state: PhaseState, cache: "hit" | "built" | null, waiting: boolean): string {
  if (d.id === "queued" && waiting && state === "current") return "Building environment";
  if (d.id === "environment" && cache) return `Environment (${cache === "hit" ? "cached" : "built"})`;
  return d.label;
}

function noteOf(d: PhaseDef, state: PhaseState, cache: "hit" | "built" | null, waiting: boolean): string | null {
  if (d.id === "queued" && cache === "built" && state === "done") return "waited for its environment's build";
  if (d.id === "environment" && waiting) return "restored once built";
  return null;
}

/** A duration for people: 0.4 s, 12 s, 2 min 05 s, 1 h 02 min. */
export function formatSeconds(s: number): string {
  if (!Number.isFinite(s) || s < 0) return "—";
  if (s < 10) return `${s.toFixed(1)} s`;
  if (s < 60) return `${Math.floor(s)} s`;
  const whole = Math.floor(s);
  if (whole < 3600) return `${Math.floor(whole / 60)} min ${String(whole % 60).padStart(2, "0")} s`;
  return `${Math.floor(whole / 3600)} h ${String(Math.floor((whole % 3600) / 60)).padStart(2, "0")} min`;
}
