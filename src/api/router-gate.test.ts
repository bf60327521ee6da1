import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import Router from "@koa/router";
import Koa from "koa";
import { describe, expect, it } from "vitest";
import { gatedRouterChain, gatedRoutes, literalPrefixes, pathGate } from "./router-gate.ts";

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

describe("gatedRouterChain", () => {
  it("answers as the routers mounted one by one do, in their order", async () => {
    // The first router's /docs/:page is tried before the second's /docs/intro;
    // a router whose gate passes but whose routes do not match (POST, /v1/runsX) hands on to the next.
    const build = (chained: boolean) => {
      const a = new Router();
      const b = new Router();
      const any = new Router();
      const app = new Koa();
      if (chained) app.use(gatedRouterChain([a, b, any]));
      else for (const r of [a, b, any]) app.use(gatedRoutes(r));
      app.use((ctx) => {
        ctx.body = `fell through ${ctx.method} ${ctx.path}`;
      });
      a.get("/docs/:page", (ctx) => {
        ctx.body = `a ${ctx.params.page}`;
      });
      b.get("/docs/intro", (ctx) => {
        ctx.body = "b intro";
      });
      b.post("/docs/:page", (ctx) => {
        ctx.body = `b post ${ctx.params.page}`;
      });
      b.get("/v1/runs", async (ctx, next) => {
        await next();
        ctx.body = `b after ${String(ctx.body)}`;
      });
      // A route on a pattern with no literal start: its router is always asked.
      any.get("/:anything/deep", (ctx) => {
        ctx.body = `any ${ctx.params.anything}`;
      });
      return app;
    };
    const serve = async (app: Koa) => {
      const server = createServer(app.callback());
      await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
      return server;
    };
    const [one, chained] = [await serve(build(false)), await serve(build(true))];
    const call = async (server: ReturnType<typeof createServer>, method: string, url: string) => {
      const r = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}${url}`, { method });
      return `${r.status} ${await r.text()}`;
    };
    try {
      const requests: [string, string][] = [
        ["GET", "/docs/intro"],
        ["POST", "/docs/intro"],
        ["GET", "/v1/runs"],
        ["GET", "/v1/runsX"],
        ["GET", "/x/deep"],
        ["GET", "/v1/repositories"],
      ];
      const answers = [];
      for (const [method, url] of requests) {
        const expected = await call(one, method, url);
        expect(await call(chained, method, url), `${method} ${url}`).toBe(expected);
        answers.push(expected);
      }
      // The cases are what they say they are.
      expect(answers).toEqual([
        "200 a intro",
        "200 b post intro",
        "200 b after fell through GET /v1/runs",
        "200 fell through GET /v1/runsX",
        "200 any x",
        "200 fell through GET /v1/repositories",
      ]);
    } finally {
      one.close();
      chained.close();
    }
  });
});
