import { DomainValidationError } from "../errors.ts";

// Paths and refs arrive from API callers and end up in git's argv or stdin.
// Both are checked here, before any process starts, so a caller can neither
// walk out of the repository nor smuggle an option or revision syntax into git.

export type Loc = (string | number)[];

const MAX_PATH = 4096;
const MAX_REF = 256;

function invalid(loc: Loc, msg: string): DomainValidationError {
  return new DomainValidationError([{ loc: [...loc], msg, type: "value_error" }]);
}

/** normalizeRepoPath's refusals as one pattern, published for every path parameter (repo-path.test.ts checks they agree). */
export const PATH_PATTERN = "^(?!/)(?!(?:[\\s\\S]*/)?\\.\\.(?:/|$))[^\\x00-\\x1f\\x7f\\\\]{0,4096}$";
export const PATH_RE = new RegExp(PATH_PATTERN);

/**
 * A repository-relative path in canonical form: "" for the root, no leading,
 * trailing or repeated slashes, no "." segments. Refuses absolute paths, any
 * ".." segment, NUL and other control characters, and backslashes (which some
 * clients treat as separators, so "..\\x" must not slip through as a name).
 */
export function normalizeRepoPath(path: string, loc: Loc = ["query", "path"]): string {
  if (typeof path !== "string") throw invalid(loc, "Path must be a string");
  if (path.length > MAX_PATH) throw invalid(loc, "Path is too long");
  if (/[\x00-\x1f\x7f]/.test(path)) throw invalid(loc, "Path must not contain control characters");
  if (path.includes("\\")) throw invalid(loc, "Path must not contain backslashes");
  if (path.startsWith("/")) throw invalid(loc, "Path must be relative to the repository root");
  const segments: string[] = [];
  for (const segment of path.split("/")) {
    if (segment === "" || segment === ".") continue;
    if (segment === "..") throw invalid(loc, "Path must not contain '..' segments");
    segments.push(segment);
  }
  return segments.join("/");
}

/**
 * validateRef's rules as one ECMAScript pattern, published in the OpenAPI
 * document for every ref and commit_hash parameter so a client can tell a
 * value the server will refuse before sending it (repo-path.test.ts checks
 * the two agree). Lookaheads carry the rules a character class cannot; they
 * read [\s\S] rather than ".", which stops at U+2028 where git does not.
 */
export const REF_PATTERN =
  "^(?!-)(?!@$)(?!/)(?![\\s\\S]*(?:\\.\\.|//|@\\{))(?![\\s\\S]*[/.]$)(?![\\s\\S]*(?:^|/)\\.)(?![\\s\\S]*\\.lock(?:/|$))[^\\x00-\\x20\\x7f~^:?*\\[\\\\]{1,256}$";
export const REF_RE = new RegExp(REF_PATTERN);

/**
 * Checks that `ref` is a plain branch or tag name (as `git check-ref-format
 * --allow-onelevel` would accept), "HEAD", or an abbreviated or full object id,
 * so it can be handed to git without being read as an option or as revision
 * syntax (`main~1`, `:/message`, `@{-1}`, `HEAD@{yesterday}`).
 */
export function validateRef(ref: string, loc: Loc = ["query", "ref"]): string {
  if (typeof ref !== "string" || ref === "") throw invalid(loc, "Ref must not be empty");
  if (ref.length > MAX_REF) throw invalid(loc, "Ref is too long");
  if (ref.startsWith("-")) throw invalid(loc, "Ref must not start with '-'");
  if (/[\x00-\x20\x7f~^:?*[\\]/.test(ref)) throw invalid(loc, "Ref contains characters git does not allow in ref names");
  if (ref === "@" || ref.includes("@{")) throw invalid(loc, "Ref must be a branch, tag or commit hash");
  if (ref.includes("..") || ref.includes("//")) throw invalid(loc, "Ref must not contain '..' or '//'");
  if (ref.startsWith("/") || ref.endsWith("/") || ref.endsWith(".")) {
    throw invalid(loc, "Ref must not start or end with '/' or end with '.'");
  }
  for (const component of ref.split("/")) {
    if (component.startsWith(".") || component.endsWith(".lock")) {
      throw invalid(loc, "Ref components must not start with '.' or end with '.lock'");
    }
  }
  return ref;
}
