import Router from "@koa/router";
import { describe, expect, it } from "vitest";
import { allowedFor } from "./allowed-methods.ts";

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
