// The paged read and the search of a run's stored output over HTTP: shapes,
// bounds (422) and another account's run (404). What they return is tested on
// both database kinds in test/db/run-log-pages.test.ts.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { insertRunRow } from "../helpers/seed.ts";
import type { Tenant } from "../helpers/service.ts";
import { twoTenantsWithRepository, type TwoTenants } from "../helpers/two-tenants.ts";

let setup: TwoTenants;
let alice: Tenant;
let bob: Tenant;
let runId: string;

beforeAll(async () => {
  setup = await twoTenantsWithRepository();
  ({ alice, bob } = setup);
  runId = await insertRunRow(setup.svc.db, { accountId: alice.accountId, repositoryId: setup.repoId, status: "completed", logsComplete: true });
  await setup.svc.db
    .insertInto("run_log_lines")
    .values(
      Array.from({ length: 30 }, (_, i) => ({
        run_id: runId,
        seq: i + 1,
        stream: i % 10 === 9 ? ("stderr" as const) : ("stdout" as const),
        ts: new Date(),
        line: i === 24 ? "Traceback: ERROR here" : `line ${i + 1}`,
      })),
    )
    .execute();
});
afterAll(() => setup?.close());

describe("a run's stored output over HTTP", () => {
  it("keeps the whole-log answer without paging parameters, and pages with them", async () => {
    const whole = await (await alice.api(`/v1/runs/${runId}/logs/stderr`)).json();
    expect(whole).toMatchObject({ run_id: runId, stream: "stderr", content: "line 10\nline 20\nline 30\n", truncated: false });
    const page = await (await alice.api(`/v1/runs/${runId}/logs/stdout?after=5&limit=3`)).json();
    expect(page).toMatchObject({ run_id: runId, stream: "stdout", next_after: 8, last_seq: 30, complete: true, truncated: false });
    expect(page.lines.map((l: { seq: number }) => l.seq)).toEqual([6, 7, 8]);
    const both = await (await alice.api(`/v1/runs/${runId}/logs?before=1000&limit=2`)).json();
    expect(both.lines.map((l: { seq: number; stream: string }) => [l.seq, l.stream])).toEqual([
      [29, "stdout"],
      [30, "stderr"],
    ]);
    expect(both.next_after).toBeNull();
  });

  it("searches, case-insensitive unless asked", async () => {
    const found = await (await alice.api(`/v1/runs/${runId}/logs/search?q=error`)).json();
    expect(found).toMatchObject({ run_id: runId, q: "error", next_after: null, searched_through: 30, last_seq: 30 });
    expect(found.items).toEqual([expect.objectContaining({ seq: 25, stream: "stdout", line: "Traceback: ERROR here" })]);
    expect((await (await alice.api(`/v1/runs/${runId}/logs/search?q=error&case_sensitive=true`)).json()).items).toEqual([]);
    expect((await (await alice.api(`/v1/runs/${runId}/logs/search?q=line&stream=stderr&limit=2`)).json()).items.map((l: { seq: number }) => l.seq)).toEqual([
      10, 20,
    ]);
  });

  it.each([
    ["an empty q", "search?q=", ["query", "q"], "string_too_short"],
    ["a q over 256 characters", `search?q=${"a".repeat(257)}`, ["query", "q"], "string_too_long"],
    ["a search limit over 500", "search?q=a&limit=501", ["query", "limit"], "less_than_equal"],
    ["a page limit over 5000", "stdout?limit=5001", ["query", "limit"], "less_than_equal"],
    ["a negative after", "?after=-1", ["query", "after"], "greater_than_equal"],
    ["an unknown stream", "search?q=a&stream=both", ["query", "stream"], "enum"],
  ])("refuses %s with a 422", async (_name, tail, loc, type) => {
    const res = await alice.api(`/v1/runs/${runId}/logs${tail.startsWith("?") ? "" : "/"}${tail}`);
    expect(res.status).toBe(422);
    expect((await res.json()).detail).toEqual(expect.arrayContaining([expect.objectContaining({ loc, type })]));
  });

  it("is a 404 for another account's run", async () => {
    for (const tail of ["", "/stdout?after=0", "/search?q=line"]) {
      const res = await bob.api(`/v1/runs/${runId}/logs${tail}`);
      expect(res.status).toBe(404);
    }
  });
});
