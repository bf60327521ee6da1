import { describe, expect, it } from "vitest";
import { assembleResult, FrameSplitter, FrameWriter, parseFrame, type Frame } from "./frames.ts";

const TS = "2026-11-22T04:13:09.123Z";

describe("parseFrame", () => {
  it.each<[string, string, Frame]>([
    ["stdout line", `@cp1 1 o ${TS} "hello"`, { kind: "line", line: { seq: 1, stream: "stdout", ts: TS, line: "hello" } }],
    ["stderr line", `@cp1 42 e ${TS} "oops"`, { kind: "line", line: { seq: 42, stream: "stderr", ts: TS, line: "oops" } }],
    ["empty line", `@cp1 2 o ${TS} ""`, { kind: "line", line: { seq: 2, stream: "stdout", ts: TS, line: "" } }],
    [
      "escapes, a kept \\r, unicode",
      `@cp1 3 o ${TS} "a\\rb\\t\\"q\\" \\u0000 € 😀 \\ud800"`,
      { kind: "line", line: { seq: 3, stream: "stdout", ts: TS, line: 'a\rb\t"q" \u0000 € 😀 \ud800' } },
    ],
    ["a line's first piece", `@cp1 7 o+ ${TS} "abc"`, { kind: "line", line: { seq: 7, stream: "stdout", ts: TS, line: "abc", partial: true } }],
    ["a stderr piece", `@cp1 8 e+ ${TS} "abc"`, { kind: "line", line: { seq: 8, stream: "stderr", ts: TS, line: "abc", partial: true } }],
    ["exit", `@cp1 9 x ${TS} {"code":3,"signal":null}`, { kind: "exit", exit: { seq: 9, code: 3, signal: null, ts: TS } }],
    ["exit by signal", `@cp1 10 x ${TS} {"code":137,"signal":"SIGKILL"}`, { kind: "exit", exit: { seq: 10, code: 137, signal: "SIGKILL", ts: TS } }],
    ["exit without signal field", `@cp1 11 x ${TS} {"code":0}`, { kind: "exit", exit: { seq: 11, code: 0, signal: null, ts: TS } }],
    ["a trailing \\r from a CRLF log", `@cp1 1 o ${TS} "x"\r`, { kind: "line", line: { seq: 1, stream: "stdout", ts: TS, line: "x" } }],
    [
      "other timestamp precision",
      `@cp1 1 o 2026-11-22T04:13:09Z "x"`,
      { kind: "line", line: { seq: 1, stream: "stdout", ts: "2026-11-22T04:13:09Z", line: "x" } },
    ],
    ["largest safe seq", `@cp1 9007199254740991 o ${TS} "x"`, { kind: "line", line: { seq: 9007199254740991, stream: "stdout", ts: TS, line: "x" } }],
  ])("reads a %s", (_name, text, frame) => {
    expect(parseFrame(text)).toEqual(frame);
  });

  it.each([
    ["an image banner", "Welcome to the runner image"],
    ["an empty line", ""],
    ["a lone \\r", "\r"],
    ["a kubelet message", "unable to retrieve container logs for containerd://abc"],
    ["a prefix without the space", `@cp1`],
    ["another format version", `@cp2 1 o ${TS} "x"`],
    ["the magic not at the start", ` @cp1 1 o ${TS} "x"`],
    ["seq 0", `@cp1 0 o ${TS} "x"`],
    ["a leading zero", `@cp1 01 o ${TS} "x"`],
    ["a negative seq", `@cp1 -1 o ${TS} "x"`],
    ["an unsafe seq", `@cp1 9007199254740993 o ${TS} "x"`],
    ["an unknown kind", `@cp1 1 q ${TS} "x"`],
    ["a partial exit", `@cp1 1 x+ ${TS} {"code":0,"signal":null}`],
    ["a bad timestamp", `@cp1 1 o yesterday "x"`],
    ["a local timestamp", `@cp1 1 o 2026-11-22T04:13:09.123+01:00 "x"`],
    ["a missing payload", `@cp1 1 o ${TS}`],
    ["an unquoted payload", `@cp1 1 o ${TS} hello`],
    ["truncated JSON", `@cp1 1 o ${TS} "hel`],
    ["a number as a line", `@cp1 1 o ${TS} 5`],
    ["trailing garbage", `@cp1 1 o ${TS} "x" y`],
    ["an exit with a string payload", `@cp1 1 x ${TS} "0"`],
    ["an exit without code", `@cp1 1 x ${TS} {"signal":null}`],
    ["an exit with a fractional code", `@cp1 1 x ${TS} {"code":1.5,"signal":null}`],
    ["an exit with a numeric signal", `@cp1 1 x ${TS} {"code":137,"signal":9}`],
    ["an exit with an array", `@cp1 1 x ${TS} [0]`],
    ["an exit with null", `@cp1 1 x ${TS} null`],
    ["double spaces", `@cp1  1 o ${TS} "x"`],
  ])("passes %s through as foreign", (_name, text) => {
    expect(parseFrame(text)).toEqual({ kind: "foreign", text: text.endsWith("\r") ? text.slice(0, -1) : text });
  });
});

describe("FrameSplitter", () => {
  const sample = [
    `@cp1 1 o ${TS} "caf\u00e9 \u20ac \ud83d\ude00"`,
    "a foreign line with \u00fcml\u00e4uts",
    `@cp1 2 e+ ${TS} "piece"`,
    `@cp1 3 e ${TS} "rest"`,
    "",
    `@cp1 4 x ${TS} {"code":0,"signal":null}`,
  ];
  const bytes = Buffer.from(sample.join("\r\n").replace("\r\n\r\n", "\n\n") + "\n", "utf8");
  const expected = sample.map((line) => parseFrame(line));

  it("reads the sample whole", () => {
    const s = new FrameSplitter();
    expect([...s.push(bytes), ...s.end()]).toEqual(expected);
  });

  it("gives the same frames wherever the body is cut, even inside a character or a \\r\\n", () => {
    for (let i = 0; i <= bytes.length; i++) {
      const s = new FrameSplitter();
      const frames = [...s.push(bytes.subarray(0, i)), ...s.push(bytes.subarray(i)), ...s.end()];
      expect(frames, `cut at byte ${i}`).toEqual(expected);
    }
  });

  it("gives the same frames when cut at two places", () => {
    for (let i = 0; i <= bytes.length; i += 3) {
      for (let j = i; j <= bytes.length; j += 5) {
        const s = new FrameSplitter();
        const frames = [...s.push(bytes.subarray(0, i)), ...s.push(bytes.subarray(i, j)), ...s.push(bytes.subarray(j)), ...s.end()];
        expect(frames, `cut at bytes ${i} and ${j}`).toEqual(expected);
      }
    }
  });

  it("gives the same frames one byte at a time", () => {
    const s = new FrameSplitter();
    const frames: Frame[] = [];
    for (const b of bytes) frames.push(...s.push(Uint8Array.of(b)));
    frames.push(...s.end());
    expect(frames).toEqual(expected);
  });

  it("accepts already decoded strings cut anywhere", () => {
    const text = bytes.toString("utf8");
    for (let i = 0; i <= text.length; i++) {
      const s = new FrameSplitter();
      expect([...s.push(text.slice(0, i)), ...s.push(text.slice(i)), ...s.end()], `cut at ${i}`).toEqual(expected);
    }
  });

  it("returns a last line without a newline at the end", () => {
    const s = new FrameSplitter();
    expect(s.push(`@cp1 1 o ${TS} "a"\n@cp1 2 x ${TS} {"code":0`)).toHaveLength(1);
    expect(s.push(',"signal":null}')).toEqual([]);
    expect(s.end()).toEqual([{ kind: "exit", exit: { seq: 2, code: 0, signal: null, ts: TS } }]);
    expect(s.end()).toEqual([]);
  });

  it("turns invalid UTF-8 and a character cut off by the end into U+FFFD", () => {
    const s = new FrameSplitter();
    const frames = [...s.push(Buffer.from([0x61, 0xff, 0x62, 0x0a, 0x63, 0xe2, 0x82])), ...s.end()];
    expect(frames).toEqual([
      { kind: "foreign", text: "a\ufffdb" },
      { kind: "foreign", text: "c\ufffd" },
    ]);
  });

  it("gives up on an endless line as foreign text instead of buffering it all", () => {
    const s = new FrameSplitter({ maxLineLength: 10 });
    expect(s.push("x".repeat(25))).toEqual([
      { kind: "foreign", text: "x".repeat(10) },
      { kind: "foreign", text: "x".repeat(10) },
    ]);
    expect([...s.push("\n"), ...s.end()]).toEqual([{ kind: "foreign", text: "xxxxx" }]);
  });
});

describe("result frames", () => {
  const framesOf = (write: (w: FrameWriter) => void) => {
    let out = "";
    write(new FrameWriter((c) => (out += c)));
    const splitter = new FrameSplitter();
    return [...splitter.push(out), ...splitter.end()];
  };

  it.each([
    ["empty document", ""],
    ["one piece", JSON.stringify({ a: 1 })],
    ["many pieces with escapes and non-ASCII", JSON.stringify({ s: '"quoted"\n日本語 '.repeat(3000) })],
  ])("round-trips %s through the writer and parser", (_name, doc) => {
    const frames = framesOf((w) => {
      w.line("stderr", "progress");
      w.result(doc, 1000);
      w.exit(0);
    });
    expect(frames.every((f) => f.kind !== "foreign")).toBe(true);
    const pieces = frames.flatMap((f) => (f.kind === "result" ? [f.result] : []));
    expect(pieces.length).toBe(Math.max(1, Math.ceil(doc.length / 1000)));
    expect(assembleResult(pieces)).toBe(doc);
    // Every frame fits in a CRI log line.
    for (const f of frames) if (f.kind === "result") expect(Buffer.byteLength(JSON.stringify(f.result.piece))).toBeLessThan(16 * 1024);
  });

  it("assembles from repeated and reordered pieces (a resumed read)", () => {
    const pieces = framesOf((w) => w.result("abcdefghij", 3)).flatMap((f) => (f.kind === "result" ? [f.result] : []));
    expect(assembleResult([...pieces].reverse().concat(pieces))).toBe("abcdefghij");
  });

  it("is null until the last piece has arrived", () => {
    const pieces = framesOf((w) => w.result("abcdefghij", 3)).flatMap((f) => (f.kind === "result" ? [f.result] : []));
    expect(assembleResult(pieces.slice(0, -1))).toBeNull();
    expect(assembleResult([])).toBeNull();
  });

  it("parses r and r+ frames and refuses a non-string payload", () => {
    expect(parseFrame('@cp1 3 r+ 2026-01-02T03:04:05.678Z "ab"')).toEqual({
      kind: "result",
      result: { seq: 3, ts: "2026-01-02T03:04:05.678Z", piece: "ab", partial: true },
    });
    expect(parseFrame('@cp1 3 r 2026-01-02T03:04:05.678Z {"a":1}').kind).toBe("foreign");
  });
});

describe("metric frames", () => {
  it("parses an m frame's record as text and refuses m+ and a non-string payload", () => {
    expect(parseFrame('@cp1 4 m 2026-01-02T03:04:05.678Z "{\\"name\\":\\"loss\\",\\"value\\":1}"')).toEqual({
      kind: "metric",
      metric: { seq: 4, ts: "2026-01-02T03:04:05.678Z", record: '{"name":"loss","value":1}' },
    });
    expect(parseFrame('@cp1 4 m+ 2026-01-02T03:04:05.678Z "x"').kind).toBe("foreign");
    expect(parseFrame('@cp1 4 m 2026-01-02T03:04:05.678Z {"name":"loss"}').kind).toBe("foreign");
  });
});
