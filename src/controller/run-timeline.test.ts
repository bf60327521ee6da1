import type { V1ContainerStatus, V1Job, V1Pod } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { mergeTimeline, podTimeline } from "./run-timeline.ts";

const t = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s));
const at = (s: number) => t(s).toISOString();
const container = (name: string, state: V1ContainerStatus["state"]): V1ContainerStatus => ({
  name,
  image: "img",
  imageID: "",
  ready: false,
  restartCount: 0,
  state,
});
const done = (name: string, start: number, end: number, exitCode = 0) =>
  container(name, { terminated: { exitCode, startedAt: t(start), finishedAt: t(end), reason: exitCode === 0 ? "Completed" : "Error" } });
const pod = (p: { scheduled?: number; init?: V1ContainerStatus[]; main?: V1ContainerStatus }): V1Pod => ({
  status: {
    conditions:
      p.scheduled === undefined ? [{ type: "PodScheduled", status: "False" }] : [{ type: "PodScheduled", status: "True", lastTransitionTime: t(p.scheduled) }],
    initContainerStatuses: p.init ?? [],
    containerStatuses: p.main ? [p.main] : [],
  },
});
const job = (startTime?: number): V1Job => ({ status: startTime === undefined ? {} : { startTime: t(startTime) } });

describe("podTimeline", () => {
  const cases: { name: string; job: V1Job | null; pod: V1Pod | null; want: Record<string, string> }[] = [
    { name: "no Job yet: nothing", job: null, pod: null, want: {} },
    { name: "a suspended Job (no startTime) is not admitted", job: job(), pod: null, want: {} },
    { name: "Job started, no pod", job: job(1), pod: null, want: { admitted: at(1) } },
    { name: "pod not scheduled", job: job(1), pod: pod({}), want: { admitted: at(1) } },
    { name: "scheduled, pulling the first image", job: job(1), pod: pod({ scheduled: 2 }), want: { admitted: at(1), scheduled: at(2) } },
    {
      name: "first init container running: its image is ready",
      job: job(1),
      pod: pod({ scheduled: 2, init: [container("tools", { running: { startedAt: t(5) } })] }),
      want: { admitted: at(1), scheduled: at(2), imageReady: at(5) },
    },
    {
      name: "checkout running: not yet checked out",
      job: job(1),
      pod: pod({ scheduled: 2, init: [done("tools", 5, 5), container("checkout", { running: { startedAt: t(6) } })] }),
      want: { admitted: at(1), scheduled: at(2), imageReady: at(5) },
    },
    {
      name: "every step of a run with an environment",
      job: job(1),
      pod: pod({
        scheduled: 2,
        init: [done("tools", 5, 5), done("checkout", 6, 9), done("environment", 9, 11)],
        main: container("main", { running: { startedAt: t(12) } }),
      }),
      want: { admitted: at(1), scheduled: at(2), imageReady: at(5), checkedOut: at(9), environmentReady: at(11) },
    },
    {
      name: "a failed checkout is not checked out",
      job: job(1),
      pod: pod({ scheduled: 2, init: [done("tools", 5, 5), done("checkout", 6, 9, 128)] }),
      want: { admitted: at(1), scheduled: at(2), imageReady: at(5) },
    },
    {
      name: "the earliest container start counts, whatever the list order",
      job: job(1),
      pod: pod({ scheduled: 2, init: [done("checkout", 7, 8), done("tools", 4, 5)] }),
      want: { admitted: at(1), scheduled: at(2), imageReady: at(4), checkedOut: at(8) },
    },
  ];
  it.each(cases)("$name", ({ job, pod, want }) => {
    expect(podTimeline(job, pod)).toEqual(want);
  });
});

describe("mergeTimeline", () => {
  it.each([
    { name: "nothing before", previous: undefined, next: { admitted: at(1) }, want: { admitted: at(1) } },
    { name: "new marks are added", previous: { admitted: at(1) }, next: { admitted: at(1), scheduled: at(2) }, want: { admitted: at(1), scheduled: at(2) } },
    { name: "a known mark never moves", previous: { admitted: at(1) }, next: { admitted: at(30) }, want: { admitted: at(1) } },
    { name: "a pod gone does not erase marks", previous: { admitted: at(1), checkedOut: at(9) }, next: {}, want: { admitted: at(1), checkedOut: at(9) } },
  ])("$name", ({ previous, next, want }) => {
    expect(mergeTimeline(previous, next)).toEqual(want);
  });
});
