// RFC 3339 UTC with milliseconds, as the contract promises for every
// timestamp: exactly what Date#toISOString writes for years 0 to 9999.
// Date#toISOString took about half a microsecond a call on Node 24, and a page
// of 20 runs or repositories makes 40 to 80 calls (bench/api.ts, profiled);
// this does the calendar arithmetic itself in about a third of that, and
// leaves any other year (and an invalid Date) to toISOString.

const MS_PER_DAY = 86_400_000;
/** 10000-01-01T00:00:00Z: from here on the year has five digits and toISOString a sign. */
const YEAR_10000 = 253_402_300_800_000;

const [DASH, T, COLON, DOT, Z] = [45, 84, 58, 46, 90];

export function iso(d: Date): string {
  const t = d.getTime();
  if (!(t >= 0 && t < YEAR_10000)) return d.toISOString();
  const days = Math.floor(t / MS_PER_DAY);
  let rest = t - days * MS_PER_DAY;
  // Civil date from days since 1970-01-01, in 400-year eras starting on 1 March
  // (H. Hinnant, "chrono-Compatible Low-Level Date Algorithms").
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const dayOfEra = z - era * 146_097;
  const yearOfEra = Math.floor((dayOfEra - Math.floor(dayOfEra / 1460) + Math.floor(dayOfEra / 36_524) - Math.floor(dayOfEra / 146_096)) / 365);
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const mp = Math.floor((5 * dayOfYear + 2) / 153);
  const day = dayOfYear - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  const year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0);
  const hours = Math.floor(rest / 3_600_000);
  rest -= hours * 3_600_000;
  const minutes = Math.floor(rest / 60_000);
  rest -= minutes * 60_000;
  const seconds = Math.floor(rest / 1000);
  const ms = rest - seconds * 1000;
  // One string made at once from its character codes: building it from parts
  // made a dozen intermediate strings per call (15 KiB of garbage for a page
  // of 20 repositories, bench/api.ts heap profile) and took half again as long.
  return String.fromCharCode(
    48 + Math.floor(year / 1000),
    48 + (Math.floor(year / 100) % 10),
    48 + (Math.floor(year / 10) % 10),
    48 + (year % 10),
    DASH,
    48 + Math.floor(month / 10),
    48 + (month % 10),
    DASH,
    48 + Math.floor(day / 10),
    48 + (day % 10),
    T,
    48 + Math.floor(hours / 10),
    48 + (hours % 10),
    COLON,
    48 + Math.floor(minutes / 10),
    48 + (minutes % 10),
    COLON,
    48 + Math.floor(seconds / 10),
    48 + (seconds % 10),
    DOT,
    48 + Math.floor(ms / 100),
    48 + (Math.floor(ms / 10) % 10),
    48 + (ms % 10),
    Z,
  );
}

export const isoOrNull = (d: Date | null | undefined): string | null => (d ? iso(d) : null);
