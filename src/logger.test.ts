import { describe, expect, it } from "vitest";
import { createRootLogger, maskMessageValues, maskSqlLiterals } from "./logger.ts";

function logged(fields: object): Record<string, unknown> {
  const lines: string[] = [];
  createRootLogger("info", { write: (l: string) => void lines.push(l) }).error(fields, "failed");
  return JSON.parse(lines[0]!) as Record<string, unknown>;
}

/** The shape of a database error as pg and PGlite throw it. */
function dbError(message: string, extra: Record<string, unknown>): Error {
  return Object.assign(new Error(message), { severity: "ERROR", code: "22P02", routine: "string_to_uuid", ...extra });
}

describe("logged errors", () => {
  it("drop bound parameters and the detail, and mask quoted values and SQL literals, in the error and its causes", () => {
    const inner = dbError('invalid input syntax for type uuid: "cp_SECRET"', {
      params: ["cp_SECRET", "hash-123"],
      detail: "Key (key_hash)=(hash-123) already exists.",
      query: "select * from api_keys where key_hash = 'hash-123' and id = $1",
      where: "unnamed portal parameter $1 = 'cp_SECRET'",
      constraint: "api_keys_key_hash_key",
    });
    for (const key of ["err", "error"]) {
      const text = JSON.stringify(logged({ [key]: inner }));
      expect(text).not.toContain("cp_SECRET");
      expect(text).not.toContain("hash-123");
      expect(text).toContain("api_keys_key_hash_key");
      expect(text).toContain("invalid input syntax for type uuid");
      expect(text).toContain("22P02");
    }
    // As a cause (pino folds causes into the message and stack).
    const text = JSON.stringify(logged({ err: new Error("could not authenticate", { cause: inner }) }));
    expect(text).not.toContain("cp_SECRET");
    expect(text).toContain("could not authenticate: invalid input syntax for type uuid");
  });

  it("leaves other errors alone", () => {
    const line = logged({ err: Object.assign(new Error('repository "x" not found'), { status: 404 }) }) as { err: { message: string; status: number } };
    expect(line.err.message).toBe('repository "x" not found');
    expect(line.err.status).toBe(404);
  });

  it("masks only values, not identifiers", () => {
    expect(maskMessageValues('duplicate key value violates unique constraint "api_keys_key_hash_key"')).toBe(
      'duplicate key value violates unique constraint "api_keys_key_hash_key"',
    );
    expect(maskMessageValues('value "99999999999" is out of range for type integer')).toBe('value "[redacted]" is out of range for type integer');
    expect(maskSqlLiterals("select $1, 'a''b', E'c', $tag$d$tag$, $$e$$")).toBe("select $1, '[redacted]', E'[redacted]', '[redacted]', '[redacted]'");
  });
});
