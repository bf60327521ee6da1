import pg from "pg";

// Every row the API lists carries two or more timestamptz columns, and pg's
// parser for them (postgres-date) runs three regular expressions per value:
// with the ISO string made of it again, a tenth of the service's time on
// GET /v1/repositories (bench/api.ts, profiled). Postgres writes timestamptz
// in one shape under the DateStyle it defaults to (ISO):
// "2026-11-23 03:58:28.123456+00", the offset ±HH or ±HH:MM. That shape is
// read here by position; anything else (BC dates, infinity, years before 100
// or past 9999, offsets with seconds) goes to pg's own parser, so the values
// are the same either way: the fraction is cut to milliseconds as Date does.

const TIMESTAMPTZ_OID = 1184;

const fallback = pg.types.getTypeParser(TIMESTAMPTZ_OID, "text") as (text: string) => Date | number | null;

/** The decimal number in text[from, to), or -1 if a character is not a digit. */
function digits(text: string, from: number, to: number): number {
  let n = 0;
  for (let i = from; i < to; i++) {
    const d = text.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return -1;
    n = n * 10 + d;
  }
  return n;
}

export function parseTimestamptz(text: string): Date | number | null {
  if (
    text.length < 22 ||
    text.charCodeAt(4) !== 45 ||
    text.charCodeAt(7) !== 45 ||
    text.charCodeAt(10) !== 32 ||
    text.charCodeAt(13) !== 58 ||
    text.charCodeAt(16) !== 58
  ) {
    return fallback(text);
  }
  const year = digits(text, 0, 4);
  const month = digits(text, 5, 7);
  const day = digits(text, 8, 10);
  const hour = digits(text, 11, 13);
  const minute = digits(text, 14, 16);
  const second = digits(text, 17, 19);
  if (year < 100 || month < 1 || day < 1 || hour < 0 || minute < 0 || second < 0) return fallback(text);
  let i = 19;
  let ms = 0;
  if (text.charCodeAt(i) === 46) {
    const start = ++i;
    while (i < text.length && text.charCodeAt(i) >= 48 && text.charCodeAt(i) <= 57) i++;
    const n = i - start;
    if (n === 0 || n > 6) return fallback(text);
    // Milliseconds are the first three digits; the rest is below what a Date holds.
    ms = digits(text, start, start + Math.min(n, 3)) * (n === 1 ? 100 : n === 2 ? 10 : 1);
  }
  const sign = text.charCodeAt(i);
  if (sign !== 43 && sign !== 45) return fallback(text);
  const rest = text.length - i - 1;
  if (rest !== 2 && rest !== 5) return fallback(text);
  const offsetHours = digits(text, i + 1, i + 3);
  let offsetMinutes = 0;
  if (rest === 5) {
    if (text.charCodeAt(i + 3) !== 58) return fallback(text);
    offsetMinutes = digits(text, i + 4, i + 6);
  }
  if (offsetHours < 0 || offsetMinutes < 0) return fallback(text);
  const offsetMs = (offsetHours * 60 + offsetMinutes) * 60_000;
  return new Date(Date.UTC(year, month - 1, day, hour, minute, second, ms) - (sign === 43 ? offsetMs : -offsetMs));
}

/** The type parsers a pool's clients use: pg's own, with timestamptz read by parseTimestamptz. */
export const typeParsers = {
  getTypeParser(oid: number, format?: "text" | "binary") {
    if (oid === TIMESTAMPTZ_OID && format !== "binary") return parseTimestamptz;
    return pg.types.getTypeParser(oid, format);
  },
};
