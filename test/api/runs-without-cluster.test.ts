import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Tenant } from "../helpers/service.ts";
import { twoTenantsWithRepository, type TwoTenants } from "../helpers/two-tenants.ts";

// With no cluster reachable the service still serves everything else; run
// creation answers 503 with a clear detail, after the request was validated.

let alice: Tenant;
let bob: Tenant;
let repoId: string;

let setup: TwoTenants;

beforeAll(async () => {
  setup = await twoTenantsWithRepository();
  ({ alice, bob, repoId } = setup);
});
afterAll(() => setup?.close());

describe("runs without a cluster", () => {
  it("answers 503 with a clear detail for a valid request", async () => {
    const res = await alice.api(`/v1/repositories/${repoId}/main/runs`, { method: "POST", json: { command: ["echo", "hi"] } });
    expect(res.status).toBe(503);
    expect((await res.json()).detail).toMatch(/Kubernetes is not reachable/);
  });

  it.each([
    ["neither command nor experiment", {}, ["body", "command"], "value_error"],
    ["both", { command: ["x"], analyzed_experiment: "e1" }, ["body", "command"], "value_error"],
    ["an empty command", { command: [] }, ["body", "command"], "too_short"],
    ["an unknown compute type", { command: ["x"], compute_type: "huge" }, ["body", "compute_type"], "enum"],
    ["a timeout over the maximum", { command: ["x"], timeout_seconds: 10_000_000 }, ["body", "timeout_seconds"], "less_than_equal"],
    ["parameters without an experiment", { command: ["x"], parameters: { a: 1 } }, ["body", "parameters"], "value_error"],
  ])("validates the body first: %s", async (_name, json, loc, type) => {
    const res = await alice.api(`/v1/repositories/${repoId}/main/runs`, { method: "POST", json });
    expect(res.status).toBe(422);
    expect((await res.json()).detail).toEqual(expect.arrayContaining([expect.objectContaining({ loc, type })]));
  });

  it("answers 404 for an unknown commit and another account's repository", async () => {
    expect((await alice.api(`/v1/repositories/${repoId}/${"f".repeat(40)}/runs`, { method: "POST", json: { command: ["x"] } })).status).toBe(404);
    const res = await bob.api(`/v1/repositories/${repoId}/main/runs`, { method: "POST", json: { command: ["x"] } });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ detail: "Repository not found" });
  });

  it("lists no runs and answers 404 for unknown ones", async () => {
    expect(await (await alice.api("/v1/runs")).json()).toEqual({ items: [], next_cursor: null });
    expect(await (await alice.api(`/v1/repositories/${repoId}/main/runs`)).json()).toEqual({ items: [], next_cursor: null });
    const id = "0190b1c2-3d4e-7f00-8a1b-2c3d4e5f6a7b";
    for (const path of [`/v1/runs/${id}`, `/v1/runs/${id}/logs/stdout`]) {
      const res = await alice.api(path);
      expect(res.status).toBe(404);
      expect(await res.json()).toEqual({ detail: "Run not found" });
    }
  });
});
