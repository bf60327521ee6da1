/**
 * A workload resource that can never be reconciled as it is: an invalid spec,
 * a compute type this installation does not define, data Postgres cannot
 * store. Retrying cannot help, so the reconciler marks it failed at once with
 * this message instead of retrying forever.
 */
export class Unreconcilable extends Error {
  readonly reason: string;
  /**
   * The workload failed for a reason of its own that users act on (its environment failed to
   * build), not a fault of the installation: no unreconcilable metric, no warning.
   */
  readonly expected: boolean;
  constructor(reason: string, message: string, opts: { expected?: boolean } = {}) {
    super(message);
    this.name = "Unreconcilable";
    this.reason = reason;
    this.expected = opts.expected ?? false;
  }
}
