/**
 * A workload resource that can never be reconciled as it is: an invalid spec,
 * a compute type this installation does not define, data Postgres cannot
 * store. Retrying cannot help, so the reconciler marks it failed at once with
 * this message instead of retrying forever.
 */
export class Unreconcilable extends Error {
  readonly reason: string;
  constructor(reason: string, message: string) {
    super(message);
    this.name = "Unreconcilable";
    this.reason = reason;
  }
}
