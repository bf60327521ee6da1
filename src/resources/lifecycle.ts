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
