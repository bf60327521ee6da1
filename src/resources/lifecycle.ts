// A workload's phases, declared once: the order a phase may move in and
// which phases are final. The controller, the Postgres mirror (its ordering
// rank) and the log stream all read terminal-ness from here, so no list of
// phases or rank number is written anywhere else.

export interface Lifecycle<P extends string> {
  /** Every phase, live ones first, in the order they can follow each other. */
  readonly phases: readonly [P, ...P[]];
  readonly initial: P;
  readonly terminal: ReadonlySet<P>;
  /** Orders writes of the mirrored status: a lower rank never overwrites a higher one. Throws on a phase of another lifecycle. */
  rank(phase: string): number;
  /** The rank every terminal phase shares: one terminal status never replaces another. */
  readonly terminalRank: number;
  isTerminal(phase: string | undefined | null): boolean;
}

export function defineLifecycle<const L extends string, const T extends string>(live: readonly [L, ...L[]], terminal: readonly [T, ...T[]]): Lifecycle<L | T> {
  const phases = [...live, ...terminal] as [L | T, ...(L | T)[]];
  const terminalSet = new Set<L | T>(terminal);
  const terminalRank = live.length;
  const ranks = new Map<string, number>([...live.map((p, i) => [p, i] as const), ...terminal.map((p) => [p, terminalRank] as const)]);
  return Object.freeze({
    phases,
    initial: live[0],
    terminal: terminalSet,
    rank: (phase: string) => {
      const rank = ranks.get(phase);
      if (rank === undefined) throw new Error(`'${phase}' is not a phase of this lifecycle (${phases.join(", ")})`);
      return rank;
    },
    terminalRank,
    isTerminal: (phase: string | undefined | null) => phase != null && terminalSet.has(phase as L | T),
  });
}

/** What names a kind of workload everywhere: its noun (resource and Job names are <noun>-<id>, pods carry codeplane.dev/<noun>), CRD kind and plural, and lifecycle. */
export interface WorkloadKind {
  readonly noun: string;
  readonly kind: string;
  readonly plural: string;
  readonly lifecycle: Lifecycle<string>;
}

export const resourceNameOf = (w: Pick<WorkloadKind, "noun">, id: string) => `${w.noun}-${id}`;
export const podLabelOf = (w: Pick<WorkloadKind, "noun">) => `codeplane.dev/${w.noun}`;

/** The id in a resource name, or null when the name is not of this kind. */
export function idFromName(w: Pick<WorkloadKind, "noun">, name: string): string | null {
  const prefix = `${w.noun}-`;
  return name.startsWith(prefix) && name.length > prefix.length ? name.slice(prefix.length) : null;
}

/** A phase a workload went through: when it began, and whether codeplane saw it or deduced it. */
export interface Transition {
  phase: string;
  at: Date;
  /** Not seen by codeplane, but the later phases prove it happened (a run seen finished whose command had started was running). */
  inferred: boolean;
}

/** What a workload's row says now: its phase, when its main container started (if it did) and when it ended. */
export interface PhaseFacts {
  phase: string;
  startTime: Date | null;
  endTime: Date | null;
}

/**
 * The transitions to record after `recorded` (the phases recorded so far, in
 * order) now that the workload is in `now.phase`: every phase it must have gone
 * through since, in order, then the current one. Live phases form a chain (a
 * run cannot be running without having been scheduled, its `preprocessing`),
 * so a live phase brings every earlier live phase not recorded yet; a
 * terminal phase brings them only when the main container started (the last
 * live phase is the one it runs in), since a run cancelled while pending went
 * through nothing else. Phases are never recorded twice or behind a later one.
 */
export function transitionsSince(lc: Lifecycle<string>, recorded: readonly string[], now: PhaseFacts, seenAt: Date): Transition[] {
  if (recorded.includes(now.phase) || recorded.some((p) => lc.isTerminal(p))) return [];
  const reached = Math.max(-1, ...recorded.map((p) => lc.rank(p)));
  const terminal = lc.isTerminal(now.phase);
  const live = lc.phases.filter((p) => !lc.isTerminal(p));
  const upTo = terminal ? (now.startTime ? live.length - 1 : -1) : lc.rank(now.phase) - 1;
  const startedPhase = live.at(-1);
  const at = terminal ? (now.endTime ?? seenAt) : seenAt;
  const out: Transition[] = [];
  for (const p of live.slice(reached + 1, upTo + 1)) {
    // The phase the main container runs in began when it started; earlier ones, no later than what followed them.
    const began = p === startedPhase && now.startTime ? now.startTime : now.startTime && now.startTime < at ? now.startTime : at;
    out.push({ phase: p, at: began, inferred: true });
  }
  if (lc.rank(now.phase) > reached || terminal) {
    const began = !terminal && now.phase === startedPhase && now.startTime ? now.startTime : at;
    out.push({ phase: now.phase, at: began, inferred: false });
  }
  return out;
}
