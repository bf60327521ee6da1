import { describe, expect, it } from "vitest";
import { MAX_COMMIT_MESSAGE, parseCommitInfo } from "./commit-info.ts";

const H = "a".repeat(40);
const P = "b".repeat(40);
const out = (message: string, parents = P) =>
  [H, parents, "Ann", "ann@example.com", "2026-11-26T10:00:00+01:00", "Bo", "bo@example.com", "2026-11-26T11:00:00+01:00", message].join("\0");

describe("parseCommitInfo", () => {
  it("reads the fields, the title from the first line, and a merge's parents", () => {
    const c = parseCommitInfo(out("Title here\n\nBody\n", `${P} ${"c".repeat(40)}`))!;
    expect(c).toMatchObject({ commit_hash: H, title: "Title here", message: "Title here\n\nBody", parents: [P, "c".repeat(40)] });
    expect(c.author).toEqual({ name: "Ann", email: "ann@example.com", date: "2026-11-26T10:00:00+01:00" });
    expect(c.committer.name).toBe("Bo");
  });

  it("has no parent for a root commit, an empty title for an empty message, and cuts a long message", () => {
    expect(parseCommitInfo(out("", ""))).toMatchObject({ parents: [], title: "", message: "" });
    expect(parseCommitInfo(out("x".repeat(MAX_COMMIT_MESSAGE + 10)))!.message).toHaveLength(MAX_COMMIT_MESSAGE);
  });

  it("refuses output that is not git's", () => {
    expect(parseCommitInfo("fatal: bad object")).toBeNull();
    expect(parseCommitInfo(out("m").replace(H, "not-a-hash"))).toBeNull();
  });
});
