import { afterEach, describe, expect, it, vi } from "vitest";
import { ObjectStoreUnavailableError } from "../storage/object-store.ts";
import { exitCodeFor } from "./errors.ts";

describe("exitCodeFor", () => {
  afterEach(() => vi.restoreAllMocks());

  it.each<[string, unknown, number | null, string]>([
    [
      "an object store that cannot be used: its one line, no stack",
      new ObjectStoreUnavailableError("object store: cannot use s3 bucket b at http://127.0.0.1:9: cannot connect (ECONNREFUSED)"),
      1,
      "codeplane: object store: cannot use s3 bucket b at http://127.0.0.1:9: cannot connect (ECONNREFUSED)\n",
    ],
    ["a bad argument", new TypeError("--name is required"), 2, "codeplane: invalid arguments: --name is required\n"],
    ["anything else (a bug, rethrown by the caller)", new Error("boom"), null, ""],
  ])("%s", (_what, err, code, said) => {
    const written: string[] = [];
    vi.spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => {
      written.push(String(chunk));
      return true;
    });
    expect(exitCodeFor(err)).toBe(code);
    expect(written.join("")).toBe(said);
  });
});
