// Postgres reports constraint violations by SQLSTATE; both pg and PGlite
// expose it as `code` (and the constraint name as `constraint`).
export function isUniqueViolation(err: unknown, constraint?: string): boolean {
  if (!err || typeof err !== "object") return false;
  const e = err as { code?: string; constraint?: string };
  return e.code === "23505" && (constraint === undefined || e.constraint === constraint);
}

/** A foreign key pointed at a row that is gone (deleted concurrently, for instance). */
export function isForeignKeyViolation(err: unknown): boolean {
  return !!err && typeof err === "object" && (err as { code?: string }).code === "23503";
}

/** The data itself cannot be stored (SQLSTATE class 22: a NUL character, an invalid escape, a value out of range): retrying cannot help. */
export function isDataException(err: unknown): boolean {
  const code = !!err && typeof err === "object" ? (err as { code?: unknown }).code : undefined;
  return typeof code === "string" && code.startsWith("22");
}
