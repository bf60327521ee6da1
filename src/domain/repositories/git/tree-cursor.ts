// The cursor of a directory listing: opaque to clients (base64url), it holds
// the commit the first page read (so every page of one listing reads the same
// commit, however the branch moves meanwhile) and where the last page ended:
// whether among the directories or the files, and the last entry's name as
// the raw bytes git stores (names need not be valid UTF-8).

export interface TreeCursor {
  /** Full commit id, 40 or 64 lower-case hex digits. */
  commit: string;
  /** The last page ended among the directories ("d") or the files ("f"). */
  kind: "d" | "f";
  /** The last entry's name, as git stores it. */
  name: Buffer;
}

const VERSION = "t1";
const COMMIT = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/;
/** Longer than any name git itself would write (a path is at most 4096 bytes here). */
const MAX_NAME = 4096;

export function encodeTreeCursor(cursor: TreeCursor): string {
  return Buffer.concat([Buffer.from(`${VERSION}\0${cursor.commit}\0${cursor.kind}\0`), cursor.name]).toString("base64url");
}

/** The cursor, or null when `text` is not one this server wrote. */
export function decodeTreeCursor(text: string): TreeCursor | null {
  if (text.length === 0 || text.length > 8192 || !/^[A-Za-z0-9_-]+$/.test(text)) return null;
  const raw = Buffer.from(text, "base64url");
  // Canonical form only, so one position has one spelling.
  if (raw.toString("base64url") !== text) return null;
  const fields: Buffer[] = [];
  let start = 0;
  for (let i = 0; i < 3; i++) {
    const nul = raw.indexOf(0, start);
    if (nul < 0) return null;
    fields.push(raw.subarray(start, nul));
    start = nul + 1;
  }
  const [version, commit, kind] = fields.map((f) => f.toString("latin1")) as [string, string, string];
  const name = raw.subarray(start);
  if (version !== VERSION || !COMMIT.test(commit) || (kind !== "d" && kind !== "f")) return null;
  if (name.length === 0 || name.length > MAX_NAME || name.includes(0) || name.includes(0x2f)) return null;
  return { commit, kind, name: Buffer.from(name) };
}

/** Entries per page of a directory listing: the hard cap, and the default (a listing is usually wanted whole). */
export const TREE_PAGE_MAX = 1000;
export const TREE_PAGE_DEFAULT = 1000;
