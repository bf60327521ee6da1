import { z } from "zod";
import { UUID_RE } from "./ids.ts";

// Cursors are opaque to clients (base64url) and carry the last id seen. Ids
// are UUIDv7, so "id < cursor" continues a newest-first list exactly, however
// many rows are inserted meanwhile.

export const encodeCursor = (id: string): string => Buffer.from(`v1:${id}`, "utf8").toString("base64url");

export function decodeCursor(cursor: string): string | null {
  if (!/^[A-Za-z0-9_-]+$/.test(cursor)) return null;
  const text = Buffer.from(cursor, "base64url").toString("utf8");
  const m = /^v1:(.+)$/.exec(text);
  return m?.[1] && UUID_RE.test(m[1]) ? m[1].toLowerCase() : null;
}

/**
 * A cursor's text as the OpenAPI document publishes it (pattern and length), checked with
 * `.regex` so the document carries it: a refinement alone is invisible there, and a
 * client generating values from the schema would send ones the server refuses. What the
 * cursor holds is still checked after this (a well-formed cursor no page returned is 422).
 */
export const cursorText = (max: number) =>
  z.string().regex(new RegExp(`^[A-Za-z0-9_-]{1,${max}}$`), `should be the next_cursor of a previous page (base64url, at most ${max} characters)`);

export const pageQuerySchema = z.strictObject({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  cursor: cursorText(64)
    .optional()
    .transform((v, ctx) => {
      if (v === undefined) return undefined;
      const id = decodeCursor(v);
      if (!id) {
        ctx.addIssue({ code: "custom", message: "Invalid cursor" });
        return z.NEVER;
      }
      return id;
    })
    .meta({
      description:
        "Where the page starts: the `next_cursor` of the previous page, passed back unchanged. An opaque token (base64url; it holds the last id seen, so rows added meanwhile never shift the pages). Omit it for the first page. A value outside the pattern is a 422 (`string_pattern_mismatch`); a well-formed one that no page returned, a 422 (`value_error`, `Invalid cursor`).",
    }),
});

export interface PageRequest {
  limit: number;
  cursor?: string | undefined;
}

export interface Page<T> {
  items: T[];
  next_cursor: string | null;
}

/** Rows must have been fetched with limit + 1 to know whether another page exists. */
export function toPage<R extends { id: string }, T>(rows: R[], limit: number, map: (r: R) => T): Page<T> {
  const more = rows.length > limit;
  const kept = more ? rows.slice(0, limit) : rows;
  const last = kept[kept.length - 1];
  return { items: kept.map(map), next_cursor: more && last ? encodeCursor(last.id) : null };
}
