import { describe, expect, it } from "vitest";
import type { GitFile } from "../domain/repositories/git-port.ts";
import { DomainValidationError } from "../domain/errors.ts";
import { pieceOf } from "./read-file.ts";

const textFile = (content: string, size = Buffer.byteLength(content)): GitFile => ({
  commit_hash: "c".repeat(40),
  path: "a.txt",
  size,
  encoding: "utf-8",
  content,
  truncated: size > Buffer.byteLength(content),
});
const binaryFile = (bytes: Buffer, size = bytes.length): GitFile => ({
  commit_hash: "c".repeat(40),
  path: "a.bin",
  size,
  encoding: "base64",
  content: bytes.toString("base64"),
  truncated: size > bytes.length,
});
const roomy = () => 1 << 30;

/** Every piece of a file read from the start, following next_offset. */
function readAll(file: GitFile, maxBytes: number, room = roomy) {
  const pieces = [];
  let offset: number | null = 0;
  while (offset !== null) {
    const p = pieceOf(file, offset, maxBytes, room);
    pieces.push(p);
    expect(p.piece.offset).toBe(offset);
    offset = p.piece.next_offset;
    if (pieces.length > 10_000) throw new Error("does not end");
  }
  return pieces;
}

describe("read_file's pieces", () => {
  it("returns a small file whole, at once", () => {
    const { piece, text } = pieceOf(textFile("hello\n"), 0, 1024, roomy);
    expect(text).toBe("hello\n");
    expect(piece).toEqual({
      commit_hash: "c".repeat(40),
      path: "a.txt",
      size: 6,
      encoding: "utf-8",
      offset: 0,
      length: 6,
      truncated: false,
      next_offset: null,
    });
  });

  it("pages a file with max_bytes: next_offset continues it, nothing lost or repeated", () => {
    const content = "0123456789".repeat(100);
    const pieces = readAll(textFile(content), 64);
    expect(pieces.map((p) => p.text).join("")).toBe(content);
    expect(pieces.slice(0, -1).every((p) => p.piece.length === 64 && p.piece.truncated)).toBe(true);
    expect(pieces.at(-1)!.piece).toMatchObject({ truncated: false, next_offset: null });
  });

  it("never cuts a UTF-8 character, and always moves on by one at least", () => {
    const content = "aé€😀".repeat(50); // 1, 2, 3 and 4 bytes
    for (const max of [1, 2, 3, 5, 7, 64]) {
      const pieces = readAll(textFile(content), max);
      expect(pieces.map((p) => p.text).join(""), String(max)).toBe(content);
      for (const p of pieces) expect(Buffer.byteLength(p.text)).toBe(p.piece.length);
    }
  });

  it("starts an offset inside a character at the next one", () => {
    const { piece, text } = pieceOf(textFile("é!"), 1, 10, roomy);
    expect(piece.offset).toBe(2);
    expect(text).toBe("!");
  });

  it("pages binary content as base64, any byte range", () => {
    const bytes = Buffer.from(Array.from({ length: 1000 }, (_, i) => i % 256));
    const pieces = readAll(binaryFile(bytes), 300);
    expect(pieces.map((p) => p.piece.length)).toEqual([300, 300, 300, 100]);
    expect(Buffer.concat(pieces.map((p) => Buffer.from(p.text, "base64")))).toEqual(bytes);
  });

  it("fits the piece's JSON to the room left in the result, escaping counted", () => {
    const content = "\u0001".repeat(10_000); // each byte is six in JSON
    const { piece, text } = pieceOf(textFile(content), 0, 10_000, () => 6_002);
    expect(Buffer.byteLength(JSON.stringify(text))).toBeLessThanOrEqual(6_002);
    expect(piece.length).toBeGreaterThan(900);
    expect(piece.next_offset).toBe(piece.length);
    const bin = pieceOf(binaryFile(Buffer.alloc(3000)), 0, 3000, () => 1002);
    expect(Buffer.byteLength(JSON.stringify(bin.text))).toBeLessThanOrEqual(1002);
    expect(bin.piece.length).toBeGreaterThan(600);
  });

  it("says when the rest is past what the server reads (CODEPLANE_MAX_FILE_BYTES): truncated, with no next_offset", () => {
    const file = textFile("x".repeat(100), 5000);
    const last = readAll(file, 60).at(-1)!;
    expect(last.piece).toMatchObject({ offset: 60, length: 40, size: 5000, truncated: true, next_offset: null });
  });

  it("answers an offset at the end with nothing, and one past it with an error naming offset", () => {
    expect(pieceOf(textFile("abc"), 3, 10, roomy)).toEqual({
      piece: expect.objectContaining({ offset: 3, length: 0, truncated: false, next_offset: null }),
      text: "",
    });
    expect(() => pieceOf(textFile("abc"), 4, 10, roomy)).toThrow(DomainValidationError);
    expect(() => pieceOf(textFile("abc"), 4, 10, roomy)).toThrow(/offset: .*past the end of the file \(3 bytes\)/);
    expect(() => pieceOf(textFile("x".repeat(100), 5000), 200, 10, roomy)).toThrow(/CODEPLANE_MAX_FILE_BYTES/);
  });
});
