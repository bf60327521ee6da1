import { describe, expect, it } from "vitest";
import { fmtBytes, outputUrl, previewKind } from "./outputs.ts";

describe("an output's preview", () => {
  it("is chosen by its content type, and only for types shown safely", () => {
    expect(previewKind("image/png")).toBe("image");
    expect(previewKind("image/svg+xml")).toBe("image");
    expect(previewKind("image/tiff")).toBeNull(); // browsers do not show it
    expect(previewKind("text/csv; charset=utf-8")).toBe("csv");
    expect(previewKind("text/tab-separated-values; charset=utf-8")).toBe("tsv");
    expect(previewKind("application/json")).toBe("json");
    expect(previewKind("application/ld+json")).toBe("json");
    expect(previewKind("text/html; charset=utf-8")).toBe("text"); // its source, as text
    expect(previewKind("application/yaml")).toBe("text");
    expect(previewKind("application/x-ndjson")).toBe("text");
    expect(previewKind("application/pdf")).toBeNull();
    expect(previewKind("application/octet-stream")).toBeNull();
  });

  it("names sizes and addresses as the page shows them", () => {
    expect([fmtBytes(0), fmtBytes(1023), fmtBytes(1024), fmtBytes(454_281), fmtBytes(11 * 1024 * 1024 + 14_663), fmtBytes(3 * 1024 ** 4)]).toEqual([
      "0 B",
      "1023 B",
      "1.0 KiB",
      "443.6 KiB",
      "11.0 MiB",
      "3.0 TiB",
    ]);
    expect(outputUrl("r1", "plots/a b#1.png")).toBe("/v1/runs/r1/outputs/plots/a%20b%231.png");
  });
});
