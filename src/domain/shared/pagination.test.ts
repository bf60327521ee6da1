import { describe, expect, it } from "vitest";
import { newId } from "./ids.ts";
import { decodeCursor, encodeCursor, pageQuerySchema, toPage } from "./pagination.ts";

describe("cursors", () => {
  it("round-trip an id", () => {
    const id = newId();
    expect(decodeCursor(encodeCursor(id))).toBe(id);
  });

  it.each([
    ["not base64url", "***"],
    ["no version", Buffer.from("0190b1c2-0000-7000-8000-000000000000").toString("base64url")],
    ["not a uuid", Buffer.from("v1:abc").toString("base64url")],
    ["empty", ""],
  ])("refuse %s", (_name, cursor) => expect(decodeCursor(cursor)).toBeNull());

  it("parses page queries with defaults and bounds", () => {
    expect(pageQuerySchema.parse({})).toEqual({ limit: 20 });
    expect(pageQuerySchema.safeParse({ limit: "101" }).success).toBe(false);
    expect(pageQuerySchema.safeParse({ cursor: "zz" }).success).toBe(false);
  });
});

describe("toPage", () => {
  const rows = (n: number) => Array.from({ length: n }, () => ({ id: newId() })).reverse();

  it("returns a cursor only when there is more", () => {
    const r = rows(3);
    expect(toPage(r, 3, (x) => x.id)).toEqual({ items: r.map((x) => x.id), next_cursor: null });
    const more = toPage(r, 2, (x) => x.id);
    expect(more.items).toEqual([r[0]!.id, r[1]!.id]);
    expect(decodeCursor(more.next_cursor!)).toBe(r[1]!.id);
  });

  it("keeps UUIDv7 ids in creation order", () => {
    const ids = Array.from({ length: 1000 }, () => newId());
    expect([...ids].sort()).toEqual(ids);
  });
});
