import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { SDK_SCHEMA_FILE, sdkTypeScriptSchema } from "./sdk-typescript.ts";

// The TypeScript SDK's types are generated from the route declarations
// (`npm run sdk`); they are checked in so the package builds alone, and this
// keeps them from drifting: a route, field or status changed without
// regenerating fails here.
describe("the TypeScript SDK's generated types", () => {
  it("are what the route declarations generate now (run `npm run sdk` after changing the API)", async () => {
    const expected = await sdkTypeScriptSchema();
    expect(readFileSync(SDK_SCHEMA_FILE, "utf8") === expected, "packages/sdk/src/schema.ts is stale: run `npm run sdk`").toBe(true);
  }, 60_000);

  it("describe every operation of the document, with its operationId", async () => {
    const text = await sdkTypeScriptSchema();
    for (const id of ["createRun", "getRun", "streamRunLogs", "listRepositories", "getAnalysis", "createApiKey"]) expect(text).toContain(`${id}: {`);
  }, 60_000);
});
