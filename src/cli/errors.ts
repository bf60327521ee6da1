import { z } from "zod";
import { DatabaseInUseError } from "../db/embedded-lock.ts";
import { DomainError } from "../domain/errors.ts";
import { ObjectStoreUnavailableError } from "../storage/object-store.ts";

/** The exit code for a command's error that is the user's to fix, after saying why; null for anything else (a bug: rethrown). */
export function exitCodeFor(err: unknown): number | null {
  // An unusable object store at start: one line naming it and what failed, no stack.
  if (err instanceof DomainError || err instanceof DatabaseInUseError || err instanceof ObjectStoreUnavailableError) {
    process.stderr.write(`codeplane: ${err.message}\n`);
    return 1;
  }
  if (err instanceof z.ZodError || err instanceof TypeError) {
    process.stderr.write(`codeplane: invalid arguments: ${err instanceof z.ZodError ? z.prettifyError(err) : err.message}\n`);
    return 2;
  }
  return null;
}
