import { pino, type Logger } from "pino";

// The one root logger. Everything else takes a child of it, so a deployment can
// tune level and redaction in one place. Secret-bearing fields are redacted by
// path as a second line of defence: code must not log them in the first place.
export const REDACT_PATHS = [
  "req.headers.authorization",
  "req.headers.cookie",
  "headers.authorization",
  "*.password",
  "*.secret",
  "*.token",
  "*.key",
  "*.value",
  "*.client_secret",
  "*.access_token",
  "*.refresh_token",
];

// Database errors carry what was sent with the query: PGlite attaches the bound
// parameters (`params`) and the query text, Postgres quotes offending values in
// the message (`invalid input syntax for type uuid: "..."`), the detail (`Key
// (key_hash)=(...) already exists.`) and `where` (`portal parameter $1 = '...'`).
// Parameters are key hashes and secrets, so every logged error is cleaned here,
// at the serializer, whichever code path logs it: parameters dropped, the detail
// dropped, quoted values in the message and stack and literals in SQL text masked.
// What identifies the failure (code, constraint, table, column, routine) stays.
const DROPPED_KEYS = new Set(["params", "parameters", "queryOptions", "values"]);
const DROPPED_DB_KEYS = new Set(["detail"]);
const SQL_TEXT_KEYS = new Set(["query", "internalQuery", "where", "sql", "text"]);
const MASK = "[redacted]";

const isErrorLike = (v: unknown): v is Error =>
  typeof v === "object" && v !== null && (v instanceof Error || (typeof (v as Error).message === "string" && "stack" in v));

function isDatabaseError(err: Error): boolean {
  const e = err as Error & { code?: unknown; severity?: unknown; routine?: unknown };
  return typeof e.code === "string" && /^[0-9A-Z]{5}$/.test(e.code) && (e.severity !== undefined || e.routine !== undefined);
}

/** Values Postgres quotes in its messages: after a colon (`...: "value"`) or after "value" (`value "..." is out of range`). */
export const maskMessageValues = (message: string): string => message.replace(/(:\s*|\bvalue\s+)"(?:[^"]|"")*"/g, `$1"${MASK}"`);

/** String literals (standard, E'' and dollar-quoted) in SQL text. */
export const maskSqlLiterals = (text: string): string =>
  text.replace(/\$([A-Za-z_][A-Za-z0-9_]*)?\$[\s\S]*?\$\1\$/g, `'${MASK}'`).replace(/'(?:[^']|'')*'/g, `'${MASK}'`);

function sanitizeError(err: Error, seen: Set<unknown>): Error {
  if (seen.has(err)) return err;
  seen.add(err);
  const db = isDatabaseError(err);
  const message = typeof err.message === "string" ? err.message : "";
  const masked = db ? maskMessageValues(message) : message;
  const copy = Object.create(Object.getPrototypeOf(err) as object) as Error;
  for (const key of Object.getOwnPropertyNames(err)) {
    if (DROPPED_KEYS.has(key) || (db && DROPPED_DB_KEYS.has(key))) continue;
    const desc = Object.getOwnPropertyDescriptor(err, key)!;
    let value: unknown = "value" in desc ? desc.value : (err as unknown as Record<string, unknown>)[key];
    if (key === "message") value = masked;
    else if (key === "stack" && typeof value === "string") value = masked === message ? value : value.split(message).join(masked);
    else if (SQL_TEXT_KEYS.has(key) && typeof value === "string") value = maskSqlLiterals(value);
    else if (key === "errors" && Array.isArray(value)) value = value.map((v) => (isErrorLike(v) ? sanitizeError(v, seen) : v));
    else if (isErrorLike(value)) value = sanitizeError(value, seen);
    Object.defineProperty(copy, key, { value, enumerable: desc.enumerable, writable: true, configurable: true });
  }
  return copy;
}

/** pino's error serializer over a copy of the error (and its causes) without query parameters or quoted values. */
export function serializeError(value: unknown): unknown {
  if (!isErrorLike(value)) return value;
  return pino.stdSerializers.err(sanitizeError(value, new Set()));
}

export function createRootLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: "codeplane" },
      redact: { paths: REDACT_PATHS, censor: "[redacted]" },
      serializers: { err: serializeError, error: serializeError },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    destination,
  );
}

export type { Logger };
