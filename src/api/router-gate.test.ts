import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import Router from "@koa/router";
import Koa from "koa";
import { describe, expect, it } from "vitest";
import { gatedRoutes, literalPrefixes, pathGate } from "./router-gate.ts";

const noop = () => undefined;

function routerOf(paths: string[], opts: ConstructorParameters<typeof Router>[0] = {}): Router {
  const router = new Router(opts);
  for (const p of paths) router.get(p, noop);
  return router;
}

describe("literalPrefixes", () => {
  it.each([
    { paths: ["/healthz", "/docs/assets/:file"], sensitive: false, prefixes: ["/healthz", "/docs/assets/"] },
    { paths: ["/git/:repository/info/refs"], sensitive: false, prefixes: ["/git/"] },
    { paths: ["/V1/Runs/{:id}"], sensitive: false, prefixes: ["/v1/runs/"] },
    { paths: ["/MCP"], sensitive: true, prefixes: ["/MCP"] },
    { paths: ["/files/*rest"], sensitive: false, prefixes: ["/files/"] },
  ])("$paths -> $prefixes", ({ paths, sensitive, prefixes }) => {
    expect(literalPrefixes(routerOf(paths, { sensitive }))).toEqual({ prefixes, sensitive });
  });

  it("gives up when a route could match any path", () => {
    expect(literalPrefixes(routerOf(["/:anything"]))).toBeNull();
    const withMiddleware = routerOf(["/v1/x"]);
    withMiddleware.use(noop);
    expect(literalPrefixes(withMiddleware)).toBeNull();
  });
});

describe("pathGate", () => {
  // Paths a request may carry, against routes shaped like the app's: what the
  // router matches must always pass the gate; the rest may be kept out.
  const routes = [
    "/healthz",
    "/docs",
    "/docs/init.js",
    "/docs/assets/:file",
    "/git/:repository/info/refs",
    "/v1/webhooks/github",
    "/v1/runs/:run_id/logs",
    "/v1/files/*path",
    "/v1/x{/:y}",
  ];
  const candidates = [
    "/",
    "/healthz",
    "/HEALTHZ",
    "/healthz/",
    "/docs",
    "/docs/",
    "/docs/init.js",
    "/docs/initXjs",
    "/docs/assets/a.css",
    "/%64ocs",
    "/git/r/info/refs",
    "/GIT/r/info/refs/",
    "/v1/webhooks/github",
    "/v1/runs/abc/logs",
    "/v1/runs/abc/log",
    "/v1/files/a/b/c",
    "/v1/x",
    "/v1/x/1",
    "/v1/repositories",
    "/mcp",
    "",
  ];

  for (const sensitive of [false, true]) {
    for (const strict of [false, true]) {
      it(`never keeps out a path the router matches (sensitive: ${sensitive}, strict: ${strict})`, () => {
        const router = routerOf(routes, { sensitive, strict });
        const gate = pathGate(router)!;
        for (const path of candidates) {
          if (router.match(path, "GET").path.length > 0) expect(gate.test(path), path).toBe(true);
        }
        // And it does keep out what none of them could match.
        expect(gate.test("/v1/repositories")).toBe(false);
        expect(gate.test("/mcp")).toBe(false);
        expect(gate.test("/gitx/r/info/refs")).toBe(false);
        expect(gate.test("/v1/runsX")).toBe(false);
      });
    }
  }

  it("lets nothing through for a router without routes", () => {
    expect(pathGate(new Router())!.test("/anything")).toBe(false);
  });
});

describe("gatedRoutes", () => {
  it("answers as router.routes() does, and reads routes added after it was mounted", async () => {
    const router = new Router();
    const app = new Koa();
    app.use(gatedRoutes(router));
    app.use((ctx) => {
      ctx.body = "fell through";
    });
    router.get("/docs/:page", (ctx) => {
      ctx.body = `page ${ctx.params.page}`;
    });
    const server = createServer(app.callback());
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const { port } = server.address() as AddressInfo;
    const call = async (url: string) => (await fetch(`http://127.0.0.1:${port}${url}`)).text();
    try {
      expect(await call("/docs/intro")).toBe("page intro");
      expect(await call("/DOCS/intro")).toBe("page intro");
      expect(await call("/v1/repositories")).toBe("fell through");
    } finally {
      server.close();
    }
  });
});
