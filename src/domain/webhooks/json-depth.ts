// How deeply a JSON text nests, found in one linear pass over its bytes
// without parsing it: a delivery nested deeper than the limit is refused
// with 400 before JSON.parse, and before anything that walks the value
// recursively (JSON.stringify's replacer overflows the stack near 5,000
// levels; Postgres's jsonb input has a stack limit of its own).

const OPEN_OBJECT = 0x7b;
const OPEN_ARRAY = 0x5b;
const CLOSE_OBJECT = 0x7d;
const CLOSE_ARRAY = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** True when some object or array in `text` is nested more than `max` levels deep (the top level is 1). Strings are skipped, escapes included. */
export function nestsDeeperThan(text: Uint8Array, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) inString = true;
    else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (++depth > max) return true;
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) depth--;
  }
  return false;
}
