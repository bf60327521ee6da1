import pg from "pg";
import { describe, expect, it } from "vitest";
import { parseTimestamptz } from "./timestamp-parser.ts";

const pgParse = pg.types.getTypeParser(1184, "text") as (text: string) => unknown;

const value = (v: unknown) => (v instanceof Date ? `date ${v.getTime()}` : `${typeof v} ${String(v)}`);

describe("parseTimestamptz", () => {
  it.each([
    ["2026-11-23 03:58:28.123456+00", "2026-11-23T03:58:28.123Z"],
    ["2026-11-23 03:58:28.1+00", "2026-11-23T03:58:28.100Z"],
    ["2026-11-23 03:58:28.12+00", "2026-11-23T03:58:28.120Z"],
    ["2026-11-23 03:58:28.999999+00", "2026-11-23T03:58:28.999Z"],
    ["2026-11-23 03:58:28+00", "2026-11-23T03:58:28.000Z"],
    ["2026-11-23 03:58:28.5+05:30", "2026-11-22T22:28:28.500Z"],
    ["2026-11-23 03:58:28-08", "2026-11-23T11:58:28.000Z"],
    ["2024-02-29 23:59:59.999+00", "2024-02-29T23:59:59.999Z"],
    ["1970-01-01 00:00:00+00", "1970-01-01T00:00:00.000Z"],
    ["1969-12-31 23:59:59.999+00", "1969-12-31T23:59:59.999Z"],
    ["9999-12-31 23:59:59.999+00", "9999-12-31T23:59:59.999Z"],
  ])("%s is %s", (text, iso) => {
    const d = parseTimestamptz(text);
    expect(d).toBeInstanceOf(Date);
    expect((d as Date).toISOString()).toBe(iso);
    expect(value(d)).toBe(value(pgParse(text)));
  });

  // Shapes the positional reading leaves to pg's parser: the result must be pg's.
  it.each([
    "infinity",
    "-infinity",
    "0044-03-15 12:00:00+00 BC",
    "2026-11-23 03:58:28+00 BC",
    "0099-01-01 00:00:00+00",
    "12026-11-23 03:58:28+00",
    "1900-01-01 00:00:00+00:09:21",
    "2026-11-23 03:58:28.1234567+00",
    "2026-11-23 03:58:28.+00",
    "2026-11-23T03:58:28Z",
    "2026-11-23",
    "2026-1x-23 03:58:28+00",
    "not a date",
  ])("%s is read as pg reads it", (text) => {
    expect(value(parseTimestamptz(text))).toBe(value(pgParse(text)));
  });

  it("agrees with pg's parser on 20,000 random instants, fractions and offsets", () => {
    let seed = 7;
    const rand = (n: number) => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 1;
      return seed % n;
    };
    const pad = (n: number, w: number) => String(n).padStart(w, "0");
    for (let i = 0; i < 20_000; i++) {
      const d = new Date(Date.UTC(100 + rand(9900), 0, 1) + rand(366 * 86_400_000));
      if (d.getUTCFullYear() > 9999) continue;
      const offset = (rand(27) - 13) * 60 + [0, 30, 45][rand(3)]!;
      const local = new Date(d.getTime() + offset * 60_000);
      const fraction = ["", `.${pad(rand(10), 1)}`, `.${pad(rand(1000), 3)}`, `.${pad(rand(1_000_000), 6)}`][rand(4)]!;
      const abs = Math.abs(offset);
      const zone = `${offset < 0 ? "-" : "+"}${pad(Math.floor(abs / 60), 2)}${abs % 60 ? `:${pad(abs % 60, 2)}` : ""}`;
      const text =
        `${pad(local.getUTCFullYear(), 4)}-${pad(local.getUTCMonth() + 1, 2)}-${pad(local.getUTCDate(), 2)} ` +
        `${pad(local.getUTCHours(), 2)}:${pad(local.getUTCMinutes(), 2)}:${pad(local.getUTCSeconds(), 2)}${fraction}${zone}`;
      expect(value(parseTimestamptz(text)), text).toBe(value(pgParse(text)));
    }
  });
});
