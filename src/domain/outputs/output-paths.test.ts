import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { collectableOutputPaths, contentTypeOf, outputPathProblem } from "./output-paths.ts";
import { tarStream } from "./tar-writer.ts";

describe("output paths", () => {
  it("accepts relative paths and refuses what could escape or confuse", () => {
    for (const ok of ["a.png", "plots/loss curve.png", "ü/ñ.csv", "a..b/c"]) expect(outputPathProblem(ok), ok).toBeNull();
    for (const bad of ["", "/etc/passwd", "a/../b", "..", "./a", "a//b", "a/", "a\\b", "a\u0000b", "a\nb", "x".repeat(1025), `${"y".repeat(256)}/z`])
      expect(outputPathProblem(bad), JSON.stringify(bad.slice(0, 20))).not.toBeNull();
  });

  it("keeps the analysed output paths that are relative and inside the checkout", () => {
    expect(collectableOutputPaths(["./results/", "model.ckpt", "/tmp/x", "../up", "runs/*.png", "model.ckpt"])).toEqual(["results", "model.ckpt"]);
  });

  it("tells the content type by the extension", () => {
    expect(contentTypeOf("a/b.PNG")).toBe("image/png");
    expect(contentTypeOf("scores.csv")).toBe("text/csv; charset=utf-8");
    expect(contentTypeOf("model.bin")).toBe("application/octet-stream");
    expect(contentTypeOf(".hidden")).toBe("application/octet-stream");
  });
});

describe("the tar writer", () => {
  it("writes an archive GNU tar reads back, long and non-ASCII names included", async () => {
    const files: [string, Buffer][] = [
      ["short.txt", Buffer.from("short\n")],
      [`${"d".repeat(120)}/long-but-ascii.txt`, Buffer.from("ustar prefix\n")],
      [`${"e".repeat(90)}/${"f".repeat(150)}.bin`, Buffer.alloc(1000, 7)],
      ["ünïcode/naïve.csv", Buffer.from("a,b\n")],
      ["empty", Buffer.alloc(0)],
    ];
    const chunks: Buffer[] = [];
    const entries = files.map(([p, b]) => ({ path: p, size: b.length, mtime: new Date(1_700_000_000_000), open: () => Promise.resolve([b]) }));
    for await (const c of tarStream(entries)) chunks.push(c as Buffer);
    const dir = mkdtempSync(path.join(tmpdir(), "cp-tar-"));
    try {
      writeFileSync(path.join(dir, "a.tar"), Buffer.concat(chunks));
      execFileSync("tar", ["-xf", "a.tar"], { cwd: dir });
      for (const [p, b] of files) expect(readFileSync(path.join(dir, p)), p).toEqual(b);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("fails rather than write an entry whose bytes differ from its size", async () => {
    const entries = [{ path: "a", size: 5, mtime: new Date(), open: () => Promise.resolve([Buffer.from("abc")]) }];
    await expect(async () => {
      for await (const _ of tarStream(entries)) void _;
    }).rejects.toThrow(/3 bytes, expected 5/);
  });
});
