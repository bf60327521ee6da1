/**
 * The framing that keeps a run's stdout and stderr apart in the pod log.
 *
 * The pod log API merges a container's two streams, so the run container's
 * command is the runner's entrypoint (packages/runner/src/entrypoint.ts), which
 * runs the user's argv and writes one frame per line to its own stdout:
 *
 *   @cp1 <seq> <kind> <ts> <payload>
 *
 *   seq      decimal, 1, 2, 3, ... shared by both streams; the exit frame takes the last one
 *   kind     o  a stdout line          e  a stderr line
 *            o+ / e+  a piece of a line too long for one frame: the next o / e frame
 *            continues the same line (like the CRI log format's P tag; the last piece is plain o / e)
 *            x  the command's exit
 *            r / r+  a piece of a result document (the analyzer's JSON); pieces concatenate in seq
 *            order and the last one is plain r. Not a line of output: readers that show logs skip it.
 *            m  one record the run appended to $CODEPLANE_METRICS_FILE (a JSON object, as text), forwarded
 *            by the runner; not a line of output: readers that show logs skip it.
 *   ts       UTC RFC 3339 with milliseconds, when the line was read: 2026-01-02T03:04:05.678Z
 *   payload  o, e, r, m: a JSON string (so \r, control characters and any Unicode are unambiguous)
 *            x: a JSON object {"code":N,"signal":null|"SIGKILL"}
 *
 * The seq is written by the process that produced the lines, so every reader of the pod log
 * (any API replica, any reconnect) sees the same number on the same line.
 *
 * Reading the pod log: the entrypoint keeps every frame within 16 KiB including its newline
 * (containerd's default max_container_log_line_size), but the runtime may still store a frame as
 * several CRI entries (CRI-O cuts at its 8 KiB read boundaries). The kubelet joins such entries
 * back into one line only when the log is read WITHOUT timestamps=true (with it, a timestamp lands
 * inside the line: kubernetes/kubernetes#77603), so follow without timestamps (frames carry their
 * own) and without limitBytes. tailLines and sinceTime count CRI entries and can start inside a
 * frame; that first fragment parses as foreign and should be dropped. To resume, read again and
 * skip frames whose seq was already seen.
 *
 * The encoder lives only in the entrypoint, which must stay a single file copied into pods;
 * packages/runner/src/entrypoint.test.ts parses its real output with this module so the two cannot drift.
 */

export interface LogLine {
  seq: number;
  stream: "stdout" | "stderr";
  ts: string;
  line: string;
  /** The line continues in the next line frame of the same stream. */
  partial?: boolean;
}

export interface ExitFrame {
  seq: number;
  /** The command's exit status; 128 + n when it died of signal n; 127/126 when it could not be started. */
  code: number;
  signal: string | null;
  ts: string;
}

/**
 * "foreign" is a pod-log line without the magic prefix, or with it but malformed: something
 * other than the entrypoint wrote to the log (an image's own banner, a container that does not
 * run the entrypoint). It has no seq; callers show it as stdout.
 */
export interface ResultPiece {
  seq: number;
  ts: string;
  piece: string;
  /** More pieces follow; the last one has partial false. */
  partial: boolean;
}

/** A record of the run's metrics file, as the runner read it (docs/users/results.md, "Metrics"). */
export interface MetricFrame {
  seq: number;
  ts: string;
  record: string;
}

export type Frame =
  | { kind: "line"; line: LogLine }
  | { kind: "exit"; exit: ExitFrame }
  | { kind: "result"; result: ResultPiece }
  | { kind: "metric"; metric: MetricFrame }
  | { kind: "foreign"; text: string };

export const FRAME_MAGIC = "@cp1 ";

const FRAME_RE = /^@cp1 ([1-9][0-9]{0,15}) (o\+?|e\+?|r\+?|m|x) ([0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]{1,9})?Z) (.*)$/s;

/** Parses one pod-log line (its trailing "\n" already removed; a trailing "\r" is ignored). Never throws. */
export function parseFrame(text: string): Frame {
  if (text.endsWith("\r")) text = text.slice(0, -1);
  if (!text.startsWith(FRAME_MAGIC)) return { kind: "foreign", text };
  const m = FRAME_RE.exec(text);
  if (!m) return { kind: "foreign", text };
  const seq = Number(m[1]);
  const kind = m[2] as string;
  const ts = m[3] as string;
  if (!Number.isSafeInteger(seq)) return { kind: "foreign", text };
  let payload: unknown;
  try {
    payload = JSON.parse(m[4] as string);
  } catch {
    return { kind: "foreign", text };
  }
  if (kind === "x") {
    if (typeof payload !== "object" || payload === null || Array.isArray(payload)) return { kind: "foreign", text };
    const { code, signal } = payload as { code?: unknown; signal?: unknown };
    if (typeof code !== "number" || !Number.isInteger(code)) return { kind: "foreign", text };
    if (signal !== null && signal !== undefined && typeof signal !== "string") return { kind: "foreign", text };
    return { kind: "exit", exit: { seq, code, signal: signal ?? null, ts } };
  }
  if (typeof payload !== "string") return { kind: "foreign", text };
  if (kind === "m") return { kind: "metric", metric: { seq, ts, record: payload } };
  if (kind.startsWith("r")) return { kind: "result", result: { seq, ts, piece: payload, partial: kind === "r+" } };
  const line: LogLine = { seq, stream: kind.startsWith("o") ? "stdout" : "stderr", ts, line: payload };
  if (kind.endsWith("+")) line.partial = true;
  return { kind: "line", line };
}

export interface FrameSplitterOptions {
  /**
   * A pod-log line longer than this many UTF-16 code units without a newline is given up on
   * and returned as foreign text, so a misbehaving container cannot grow a reader's memory
   * without bound. Entrypoint frames are far smaller (about 16 KiB).
   */
  maxLineLength?: number;
}

/**
 * Turns a streamed pod-log body into frames. Chunks may end anywhere: inside a line, inside a
 * "\r\n", or inside a multi-byte UTF-8 character (Buffers are decoded with a streaming decoder;
 * invalid bytes become U+FFFD).
 */
export class FrameSplitter {
  #decoder = new TextDecoder("utf-8", { ignoreBOM: true });
  #pending = "";
  #maxLineLength: number;

  constructor(options: FrameSplitterOptions = {}) {
    this.#maxLineLength = options.maxLineLength ?? 1024 * 1024;
  }

  push(chunk: string | Uint8Array): Frame[] {
    const text = typeof chunk === "string" ? this.#decoder.decode() + chunk : this.#decoder.decode(chunk, { stream: true });
    return this.#take(text);
  }

  /** Call when the body ends: flushes an incomplete character and a last line without "\n". */
  end(): Frame[] {
    const frames = this.#take(this.#decoder.decode());
    if (this.#pending !== "") {
      frames.push(parseFrame(this.#pending));
      this.#pending = "";
    }
    return frames;
  }

  #take(text: string): Frame[] {
    const frames: Frame[] = [];
    if (text === "") return frames;
    let start = 0;
    for (;;) {
      const nl = text.indexOf("\n", start);
      if (nl === -1) break;
      const piece = text.slice(start, nl);
      frames.push(parseFrame(this.#pending === "" ? piece : this.#pending + piece));
      this.#pending = "";
      start = nl + 1;
    }
    if (start < text.length) this.#pending += text.slice(start);
    while (this.#pending.length > this.#maxLineLength) {
      frames.push({ kind: "foreign", text: this.#pending.slice(0, this.#maxLineLength) });
      this.#pending = this.#pending.slice(this.#maxLineLength);
    }
    return frames;
  }
}

/**
 * Writes frames for a program of ours that produces framed output itself (the
 * analyzer) rather than through the entrypoint. Lines must not contain "\n";
 * they are short progress messages, so no piece splitting is needed for them.
 */
export class FrameWriter {
  #seq = 0;
  readonly #write: (chunk: string) => void;

  constructor(write: (chunk: string) => void) {
    this.#write = write;
  }

  #frame(kind: string, payload: string): void {
    this.#seq += 1;
    this.#write(`${FRAME_MAGIC}${this.#seq} ${kind} ${new Date().toISOString()} ${payload}\n`);
  }

  line(stream: "stdout" | "stderr", text: string): void {
    for (const part of text.split("\n")) this.#frame(stream === "stdout" ? "o" : "e", JSON.stringify(part.slice(0, 4000)));
  }

  /** A document of any size, as pieces small enough for one CRI log line each. */
  result(document: string, pieceChars = 4000): void {
    for (let i = 0; i < document.length || i === 0; i += pieceChars) {
      const last = i + pieceChars >= document.length;
      this.#frame(last ? "r" : "r+", JSON.stringify(document.slice(i, i + pieceChars)));
    }
  }

  exit(code: number): void {
    this.#frame("x", JSON.stringify({ code, signal: null }));
  }
}

/** Joins result pieces (in any order, repeats allowed) into the document; null when the last piece is missing. */
export function assembleResult(pieces: Iterable<ResultPiece>): string | null {
  const bySeq = new Map<number, ResultPiece>();
  for (const p of pieces) bySeq.set(p.seq, p);
  const ordered = [...bySeq.values()].sort((a, b) => a.seq - b.seq);
  // The document is the run of pieces that ends at the last non-partial one.
  let end = -1;
  for (let i = ordered.length - 1; i >= 0; i--) {
    if (!ordered[i]!.partial) {
      end = i;
      break;
    }
  }
  if (end === -1) return null;
  let start = end;
  while (start > 0 && ordered[start - 1]!.partial && ordered[start - 1]!.seq === ordered[start]!.seq - 1) start -= 1;
  return ordered
    .slice(start, end + 1)
    .map((p) => p.piece)
    .join("");
}
