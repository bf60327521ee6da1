import Router from "@koa/router";
import { describe, expect, it } from "vitest";
import { allowedFor, allowedMethods } from "./allowed-methods.ts";

describe("allowedFor", () => {
  const router = new Router();
  router.post("/v1/integrations/github", () => undefined);
  router.get("/v1/integrations/:integration_id", () => undefined);
  router.delete("/v1/integrations/:integration_id", () => undefined);

  it.each([
    { path: "/v1/integrations/github", literalOnly: false, allow: ["POST", "OPTIONS"] },
    { path: "/v1/integrations/github", literalOnly: true, allow: ["POST", "OPTIONS"] },
    { path: "/v1/integrations/0190b1c2-3d4e-7f00-8a1b-2c3d4e5f6a7b", literalOnly: false, allow: ["GET", "HEAD", "DELETE", "OPTIONS"] },
    { path: "/v1/integrations/0190b1c2-3d4e-7f00-8a1b-2c3d4e5f6a7b", literalOnly: true, allow: [] },
    { path: "/v1/nothing", literalOnly: false, allow: [] },
  ])("$path (literal only: $literalOnly) allows $allow", ({ path, literalOnly, allow }) => {
    expect(allowedFor([router], path, { literalOnly })).toEqual(allow);
  });
});

describe("allowedMethods", () => {
  const router = new Router();
  router.post("/v1/integrations/github", () => undefined);
  router.get("/v1/integrations/:integration_id", () => undefined);
  const middleware = allowedMethods([router]);
  const call = async (method: string, path: string) => {
    const ctx = { method, path, status: 404, body: undefined as unknown, set: () => undefined } as unknown as Parameters<typeof middleware>[0];
    try {
      await middleware(ctx, async () => undefined);
      return "passed";
    } catch (err) {
      return (err as { status?: number }).status;
    }
  };

  it("answers a literal path the same before and after its memo fills and is emptied", async () => {
    expect(await call("GET", "/v1/integrations/github")).toBe(405);
    // More distinct paths than the memo holds: it is emptied on the way, never wrong.
    for (let i = 0; i < 3000; i++) expect(await call("GET", `/v1/integrations/${i}`)).toBe("passed");
    expect(await call("GET", "/v1/integrations/github")).toBe(405);
    expect(await call("POST", "/v1/integrations/github")).toBe("passed");
  });
});
