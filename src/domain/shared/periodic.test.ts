import { afterEach, describe, expect, it, vi } from "vitest";
import { repeatEvery } from "./periodic.ts";

describe("repeatEvery", () => {
  afterEach(() => void vi.useRealTimers());

  it("runs a pass one interval after the start and after each pass ends, never two at once, and stop waits for the pass under way", async () => {
    vi.useFakeTimers();
    const events: string[] = [];
    let release: (() => void) | null = null;
    const job = repeatEvery(1000, async () => {
      events.push("start");
      await new Promise<void>((r) => (release = r));
      events.push("end");
    });
    await vi.advanceTimersByTimeAsync(999);
    expect(events).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(events).toEqual(["start"]);
    await vi.advanceTimersByTimeAsync(5000); // the pass is still running: no second one
    expect(events).toEqual(["start"]);
    release!();
    await vi.advanceTimersByTimeAsync(0);
    expect(events).toEqual(["start", "end"]);
    await vi.advanceTimersByTimeAsync(1000);
    expect(events).toEqual(["start", "end", "start"]);
    let stopped = false;
    const stopping = job.stop().then(() => (stopped = true));
    await vi.advanceTimersByTimeAsync(0);
    expect(stopped).toBe(false); // waits for the pass under way
    release!();
    await stopping;
    await vi.advanceTimersByTimeAsync(10_000);
    expect(events).toEqual(["start", "end", "start", "end"]);
  });
});
