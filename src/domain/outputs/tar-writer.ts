import { Readable } from "node:stream";

// A minimal POSIX tar writer (ustar, with a pax extended header for a name
// that does not fit ustar's 100 + 155 bytes or is not ASCII): regular files
// only, whose sizes are known before their bytes, pulled one after another so
// that an archive of any size streams in bounded memory. gzip it with zlib.

export interface TarEntry {
  path: string;
  size: number;
  mtime: Date;
  /** Opened when the archive reaches the entry; must yield exactly `size` bytes. */
  open(): Promise<AsyncIterable<Buffer | Uint8Array> | Iterable<Buffer | Uint8Array>>;
}

const BLOCK = 512;

function octal(n: number, width: number): string {
  return n.toString(8).padStart(width - 1, "0") + "\0";
}

function header(name: string, size: number, mtime: number, type: "0" | "x", prefix = ""): Buffer {
  const b = Buffer.alloc(BLOCK);
  b.write(name, 0, 100, "utf8");
  b.write(octal(0o644, 8), 100, "ascii");
  b.write(octal(0, 8), 108, "ascii");
  b.write(octal(0, 8), 116, "ascii");
  // Sizes past ustar's 8 GiB - 1 go in the pax header; the field is then 0.
  b.write(octal(size < 0o77777777777 ? size : 0, 12), 124, "ascii");
  b.write(octal(mtime, 12), 136, "ascii");
  b.write("        ", 148, "ascii");
  b.write(type, 156, "ascii");
  b.write("ustar\u000000", 257, "binary");
  b.write(prefix, 345, 155, "utf8");
  let sum = 0;
  for (const byte of b) sum += byte;
  b.write(octal(sum, 7) + " ", 148, "ascii");
  return b;
}

function paxRecord(key: string, value: string): string {
  const body = ` ${key}=${value}\n`;
  let len = Buffer.byteLength(body) + 1;
  while (String(len).length + Buffer.byteLength(body) !== len) len = String(len).length + Buffer.byteLength(body);
  return `${len}${body}`;
}

const padding = (size: number) => Buffer.alloc((BLOCK - (size % BLOCK)) % BLOCK);

/** The ustar header (and pax header before it when needed) for one file. */
export function entryHeaders(path: string, size: number, mtime: Date): Buffer {
  const seconds = Math.floor(mtime.getTime() / 1000);
  const ascii = /^[\x20-\x7e]*$/.test(path);
  let name = path;
  let prefix = "";
  if (ascii && path.length > 100) {
    // ustar's split: prefix (<= 155) "/" name (<= 100), at a "/".
    const cut = path.lastIndexOf("/", 155);
    if (cut > 0 && path.length - cut - 1 <= 100) {
      prefix = path.slice(0, cut);
      name = path.slice(cut + 1);
    }
  }
  const fits = ascii && name.length <= 100 && size < 0o77777777777;
  if (fits) return header(name, size, seconds, "0", prefix);
  const pax = Buffer.from(paxRecord("path", path) + (size >= 0o77777777777 ? paxRecord("size", String(size)) : ""), "utf8");
  const short = `PaxHeaders/${Buffer.from(path)
    .toString("latin1")
    .replace(/[^\x20-\x7e]/g, "_")
    .slice(-80)}`;
  return Buffer.concat([header(short, pax.length, seconds, "x"), pax, padding(pax.length), header(short, size, seconds, "0")]);
}

/** The archive of entries, in their order, as a stream. */
export function tarStream(entries: AsyncIterable<TarEntry> | Iterable<TarEntry>): Readable {
  async function* generate(): AsyncGenerator<Buffer | Uint8Array> {
    for await (const e of entries) {
      yield entryHeaders(e.path, e.size, e.mtime);
      let sent = 0;
      for await (const chunk of await e.open()) {
        sent += chunk.length;
        if (sent > e.size) throw new Error(`${e.path}: more bytes than its size (${e.size})`);
        yield chunk;
      }
      if (sent !== e.size) throw new Error(`${e.path}: ${sent} bytes, expected ${e.size}`);
      yield padding(e.size);
    }
    yield Buffer.alloc(BLOCK * 2);
  }
  return Readable.from(generate(), { objectMode: false });
}
