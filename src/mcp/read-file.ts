import type { GitFile } from "../domain/repositories/git-port.ts";
import { DomainValidationError } from "../domain/errors.ts";

/** read_file's `max_bytes` when not given: a page an agent can take in; larger files are read in several calls. */
export const READ_FILE_DEFAULT_BYTES = 256 * 1024;

/** What read_file says about the piece it returns (its structuredContent); the piece itself is a text block of its own. */
export interface FilePiece {
  commit_hash: string;
  path: string;
  size: number;
  encoding: "utf-8" | "base64";
  offset: number;
  length: number;
  truncated: boolean;
  next_offset: number | null;
}

const isContinuation = (b: number | undefined) => b !== undefined && (b & 0xc0) === 0x80;

/**
 * Where a piece ending at `end` ends when it may not end inside a UTF-8
 * character: at `end` when a character starts there, else where the character
 * it would cut starts. (The git reader has its own, outside this layer.)
 */
function characterStart(bytes: Buffer, end: number): number {
  let i = end;
  // A character is at most four bytes: at most three continuation bytes to walk back over.
  while (i > end - 3 && i > 0 && isContinuation(bytes[i])) i--;
  return isContinuation(bytes[i]) ? end : i;
}

const offsetError = (msg: string) => new DomainValidationError([{ loc: ["offset"], msg, type: "value_error" }]);

/**
 * The bytes of `file` (as the service read it: the file's first
 * CODEPLANE_MAX_FILE_BYTES, text cut on a character boundary) from `offset`,
 * at most `maxBytes` of them, and fewer when the text's JSON would take more
 * than `room(piece)` bytes (the result limit, less what the rest of the result
 * takes). UTF-8 text is never cut inside a character (an offset inside one
 * starts at the next; a piece holds one character at least, so `next_offset`
 * always moves on); base64 pieces are any byte range, each encoded on its own.
 */
export function pieceOf(file: GitFile, offset: number, maxBytes: number, room: (piece: FilePiece) => number): { piece: FilePiece; text: string } {
  const utf8 = file.encoding === "utf-8";
  const bytes = Buffer.from(file.content, utf8 ? "utf8" : "base64");
  if (offset > file.size) throw offsetError(`Value error, past the end of the file (${file.size} bytes)`);
  if (offset > bytes.length) {
    throw offsetError(`Value error, past the first ${bytes.length} bytes of the file, which is all the server reads (CODEPLANE_MAX_FILE_BYTES)`);
  }
  let start = offset;
  if (utf8) while (isContinuation(bytes[start])) start++;
  /** Where a piece of at most `want` bytes from `start` ends. */
  const cut = (want: number) => {
    let end = Math.min(bytes.length, start + Math.max(1, want));
    if (utf8 && end < bytes.length) end = Math.max(start, characterStart(bytes, end));
    if (end === start && start < bytes.length) for (end = start + 1; utf8 && isContinuation(bytes[end]);) end++;
    return end;
  };
  const make = (end: number) => {
    const piece: FilePiece = {
      commit_hash: file.commit_hash,
      path: file.path,
      size: file.size,
      encoding: file.encoding,
      offset: start,
      length: end - start,
      truncated: end < file.size,
      next_offset: end < bytes.length ? end : null,
    };
    return { piece, text: bytes.subarray(start, end).toString(utf8 ? "utf8" : "base64") };
  };
  const smallest = cut(1);
  let end = cut(maxBytes);
  for (;;) {
    const made = make(end);
    const encoded = Buffer.byteLength(JSON.stringify(made.text));
    const allowed = room(made.piece);
    if (encoded <= allowed || end <= smallest) return made;
    // Escaping (JSON's, base64's) made it too large: shorter in proportion, and always shorter than before.
    end = Math.min(cut(Math.floor(((end - start) * allowed * 0.98) / encoded)), cut(end - start - 1));
  }
}
