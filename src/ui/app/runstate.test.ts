import { describe, expect, it } from "vitest";
import { newerRun, withStatus } from "./runstate.ts";

const run = (status: string, timeline: string[] = [], extra: Record<string, unknown> = {}) => ({ status, timeline, ...extra });

describe("the run the page shows only moves forward", () => {
  it("keeps a newer status over an older answer (the cancel response after the stream said cancelled)", () => {
    const shown = run("cancelled", ["created", "ended"], { exit_code: null });
    expect(newerRun(shown, run("pending", ["created"]))).toBe(shown);
    expect(newerRun(run("running"), run("preprocessing")).status).toBe("running");
  });

  it("takes a newer or equal status, and the later answer at the same status", () => {
    expect(newerRun(run("pending"), run("running")).status).toBe("running");
    const later = run("running", [], { start_time: "t" });
    expect(newerRun(run("running"), later)).toBe(later);
  });

  it("keeps a terminal status: only the same one replaces it (for its exit code and times)", () => {
    const failed = run("failed", [], { exit_code: 1 });
    expect(newerRun(run("failed"), failed)).toBe(failed);
    expect(newerRun(run("cancelled"), failed).status).toBe("cancelled");
  });

  it("keeps the longer timeline whichever answer wins", () => {
    expect(newerRun(run("running", ["created", "admitted", "started"]), run("running", ["created"])).timeline).toEqual(["created", "admitted", "started"]);
    expect(newerRun(run("cancelled", ["created"]), run("running", ["created", "admitted"]))).toEqual(run("cancelled", ["created", "admitted"]));
  });

  it("applies a streamed status only when it is ahead", () => {
    expect(withStatus(run("running"), "cancelled").status).toBe("cancelled");
    expect(withStatus(run("cancelled"), "running").status).toBe("cancelled");
    expect(withStatus(run("running"), "bogus").status).toBe("running");
  });
});
