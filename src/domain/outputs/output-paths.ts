// An output's path as a run names it: relative to its output directory, "/"
// between segments, as the runner found it on disk. Checked on both sides (the
// runner never follows a symlink out of the directory; this is the server's
// word): no absolute path, no "." or ".." segment, no empty segment, no NUL or
// other control character, no backslash (a Windows separator that would mean
// one thing here and another to whoever unpacks the archive), at most 1,024
// bytes and 255 per segment.

export const MAX_OUTPUT_PATH_BYTES = 1024;
const MAX_SEGMENT_BYTES = 255;

/** Why path is not a valid output path, or null when it is. */
export function outputPathProblem(path: string): string | null {
  if (typeof path !== "string" || path.length === 0) return "must not be empty";
  if (Buffer.byteLength(path) > MAX_OUTPUT_PATH_BYTES) return `must be at most ${MAX_OUTPUT_PATH_BYTES} bytes`;
  if (path.startsWith("/")) return "must be relative (no leading '/')";

  if (/[\u0000-\u001f\u007f\\]/.test(path)) return "must not hold control characters or '\\'";
  if (/[\ud800-\udfff]/u.test(path.replace(/[\ud800-\udbff][\udc00-\udfff]/g, ""))) return "must be valid Unicode";
  for (const segment of path.split("/")) {
    if (segment === "") return "must not have an empty segment ('//' or a trailing '/')";
    if (segment === "." || segment === "..") return "must not have '.' or '..' segments";
    if (Buffer.byteLength(segment) > MAX_SEGMENT_BYTES) return `segments must be at most ${MAX_SEGMENT_BYTES} bytes`;
  }
  return null;
}

const TYPES: Record<string, string> = {
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  webp: "image/webp",
  svg: "image/svg+xml",
  bmp: "image/bmp",
  tif: "image/tiff",
  tiff: "image/tiff",
  csv: "text/csv; charset=utf-8",
  tsv: "text/tab-separated-values; charset=utf-8",
  txt: "text/plain; charset=utf-8",
  log: "text/plain; charset=utf-8",
  md: "text/markdown; charset=utf-8",
  json: "application/json",
  jsonl: "application/x-ndjson",
  ndjson: "application/x-ndjson",
  yaml: "application/yaml",
  yml: "application/yaml",
  xml: "application/xml",
  html: "text/html; charset=utf-8",
  htm: "text/html; charset=utf-8",
  pdf: "application/pdf",
  zip: "application/zip",
  gz: "application/gzip",
  tgz: "application/gzip",
  tar: "application/x-tar",
  parquet: "application/vnd.apache.parquet",
  npy: "application/octet-stream",
  wav: "audio/wav",
  mp3: "audio/mpeg",
  mp4: "video/mp4",
};

/** The content type told by the file name's extension; application/octet-stream when unknown. */
export function contentTypeOf(path: string): string {
  const name = path.slice(path.lastIndexOf("/") + 1);
  const dot = name.lastIndexOf(".");
  if (dot <= 0) return "application/octet-stream";
  return TYPES[name.slice(dot + 1).toLowerCase()] ?? "application/octet-stream";
}

/**
 * The analysed output paths a run collects besides $CODEPLANE_OUTPUT_DIR: those that are relative
 * paths inside the checkout (`./` and a trailing `/` dropped), at most 256 of them; an absolute path,
 * one with "..", a glob or one too long is left out (the runner checks again, on disk).
 */
export function collectableOutputPaths(paths: readonly string[]): string[] {
  const out: string[] = [];
  for (const p of paths) {
    const clean = p.replace(/^(\.\/)+/, "").replace(/\/+$/, "");
    if (/[*?[\]{}]/.test(clean) || outputPathProblem(clean) !== null || out.includes(clean)) continue;
    out.push(clean);
    if (out.length >= 256) break;
  }
  return out;
}
