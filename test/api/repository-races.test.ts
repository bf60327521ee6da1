import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createFixtureRepo, type FixtureRepo } from "../helpers/git-fixture.ts";
import { startTestService, type Tenant, type TestService } from "../helpers/service.ts";

// Found by the API fuzzer (make fuzz, two workers): an update that read the
// repository just before a concurrent DELETE removed it answered 500. The
// update now finds the row gone and answers 404 like any later request.

let svc: TestService;
let tenant: Tenant;
let fixture: FixtureRepo;

beforeAll(async () => {
  svc = await startTestService();
  tenant = await svc.tenant();
  fixture = await createFixtureRepo();
});
afterAll(async () => {
  await svc?.close();
  await fixture?.cleanup();
});

describe("a repository deleted while it is being updated", () => {
  it("answers the update 200 or 404, never 500", async () => {
    const seen = new Set<number>();
    for (let i = 0; i < 25; i++) {
      const res = await tenant.api("/v1/repositories", { method: "POST", json: { url: fixture.url } });
      expect(res.status).toBe(201);
      const { id } = (await res.json()) as { id: string };
      const [patch, del] = await Promise.all([
        tenant.api(`/v1/repositories/${id}`, { method: "PATCH", json: { name: `renamed-${i}` } }),
        tenant.api(`/v1/repositories/${id}`, { method: "DELETE" }),
      ]);
      expect(del.status).toBe(204);
      expect([200, 404], await patch.text()).toContain(patch.status);
      seen.add(patch.status);
    }
    expect(svc.logs.filter((l) => l.includes('"unhandled error"'))).toEqual([]);
  });
});
