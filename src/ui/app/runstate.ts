// What the run page shows of a run only moves forward, as the run itself does
// (pending → preprocessing → running → completed | failed | cancelled): the
// page hears of a run from several places whose answers can cross — the cancel
// response (the run as it was when the cancel was asked for), reads of the run,
// the stream's status events — and an answer older than what the page already
// shows must not take it back (issue 35: after "Cancel run" the header went
// back to "pending", with the Cancel button, when the cancel response came
// after the stream had said "cancelled").

const RANK: Record<string, number> = { pending: 0, preprocessing: 1, running: 2, completed: 3, failed: 3, cancelled: 3 };

export const statusRank = (status: string): number => RANK[status] ?? -1;

export interface RunLike {
  status: string;
  timeline?: readonly unknown[] | undefined;
}

/**
 * The run to show, given the one shown and one just heard of: the newer by status (a terminal
 * status is final: once shown, only an answer with that same status replaces the run, for its
 * exit code and times). At the same status the later answer wins. The longer timeline is kept
 * either way (a timeline only gains events).
 */
export function newerRun<R extends RunLike>(shown: R, heard: R): R {
  const a = statusRank(shown.status);
  const b = statusRank(heard.status);
  const forward = a === 3 ? heard.status === shown.status : b >= a;
  const next = forward ? heard : shown;
  const other = forward ? shown : heard;
  return (other.timeline?.length ?? -1) > (next.timeline?.length ?? -1) ? { ...next, timeline: other.timeline } : next;
}

/** A status heard on its own (a stream's status event): the run with it, if it is ahead of the run's. */
export function withStatus<R extends RunLike>(shown: R, status: string): R {
  if (statusRank(status) < 0) return shown;
  return newerRun(shown, { ...shown, status });
}
