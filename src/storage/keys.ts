import { InvalidKeyError } from "./object-store.ts";

// The keys both stores accept: a strict form, so that in the directory store
// no key can name a path outside its folder (no "..", no absolute path, no NUL,
// no backslash, no hidden name) and a key means the same object in both
// backends. Segments separated by "/", each starting with a letter, a digit or
// "_" (so never "." or "..", and never the store's own dot-named entries) and
// then letters, digits, ".", "_" and "-". At most 1,024 bytes (S3's limit) and
// 200 per segment (a file name, with the directory store's suffix, stays under
// the usual 255).

export const MAX_KEY_LENGTH = 1024;
export const MAX_SEGMENT_LENGTH = 200;
const SEGMENT = /^[A-Za-z0-9_][A-Za-z0-9._-]*$/;

/** Why key is not a valid object key, or null when it is. */
export function keyProblem(key: string): string | null {
  if (typeof key !== "string" || key.length === 0) return "must not be empty";
  if (key.length > MAX_KEY_LENGTH) return `must be at most ${MAX_KEY_LENGTH} characters`;
  if (key.startsWith("/")) return "must not start with '/'";
  for (const segment of key.split("/")) {
    if (segment === "") return "must not have an empty segment ('//' or a trailing '/')";
    if (segment === "." || segment === "..") return "must not have '.' or '..' segments";
    if (segment.length > MAX_SEGMENT_LENGTH) return `segments must be at most ${MAX_SEGMENT_LENGTH} characters`;
    if (!SEGMENT.test(segment)) return "segments must be letters, digits, '.', '_' and '-', starting with a letter, a digit or '_'";
  }
  return null;
}

/** key itself, or InvalidKeyError. */
export function checkKey(key: string): string {
  const problem = keyProblem(key);
  if (problem) throw new InvalidKeyError(key, problem);
  return key;
}

/** prefix itself when some valid key could start with it ("" lists everything), or InvalidKeyError. */
export function checkPrefix(prefix: string): string {
  if (prefix === "") return prefix;
  // "envs/" and "envs/ab" are prefixes of valid keys; "envs/." and "../" are not.
  if (keyProblem(prefix) && keyProblem(`${prefix}x`)) throw new InvalidKeyError(prefix, `is not the start of any valid key (${keyProblem(`${prefix}x`)})`);
  return prefix;
}
