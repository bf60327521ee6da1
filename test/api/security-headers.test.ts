import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestService, type Tenant, type TestService } from "../helpers/service.ts";

// Security headers on every response where they fit: nosniff everywhere, no
// framing, a Content-Security-Policy that still lets the rendered reference
// load its (same-origin, external) scripts, and no caching of /v1 answers,
// the new key's above all.

let svc: TestService;
let alice: Tenant;

beforeAll(async () => {
  svc = await startTestService();
  alice = await svc.tenant();
});
afterAll(() => svc?.close());

function directives(csp: string | null): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const part of (csp ?? "").split(";")) {
    const [name, ...values] = part.trim().split(/\s+/);
    if (name) out.set(name, values);
  }
  return out;
}

describe("security headers", () => {
  it("marks every kind of response nosniff and unframeable", async () => {
    const responses = await Promise.all([
      fetch(`${svc.url}/healthz`),
      fetch(`${svc.url}/openapi.json`),
      fetch(`${svc.url}/docs`),
      fetch(`${svc.url}/docs/init.js`),
      fetch(`${svc.url}/docs/assets/swagger-ui.css`),
      fetch(`${svc.url}/v1/repositories`),
      alice.api("/v1/repositories"),
      fetch(`${svc.url}/nothing-here`),
    ]);
    for (const res of responses) {
      expect(res.headers.get("x-content-type-options"), res.url).toBe("nosniff");
      expect(res.headers.get("x-frame-options"), res.url).toBe("DENY");
      expect(directives(res.headers.get("content-security-policy")).get("frame-ancestors"), res.url).toEqual(["'none'"]);
    }
  });

  it("gives /docs a policy that allows only its own scripts, and the page still references them", async () => {
    const res = await fetch(`${svc.url}/docs`);
    expect(res.status).toBe(200);
    const csp = directives(res.headers.get("content-security-policy"));
    expect(csp.get("default-src")).toEqual(["'none'"]);
    expect(csp.get("script-src")).toEqual(["'self'"]);
    expect(csp.get("connect-src")).toEqual(["'self'"]);
    expect(csp.get("style-src")).toContain("'self'");
    expect(csp.get("img-src")).toContain("'self'");
    const html = await res.text();
    const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts.map((m) => /src="([^"]+)"/.exec(m[1]!)?.[1])).toEqual(["/docs/assets/swagger-ui-bundle.js", "/docs/init.js"]);
    // No inline script: 'unsafe-inline' is not needed.
    for (const m of scripts) expect(m[2]!.trim()).toBe("");
    for (const src of ["/docs/assets/swagger-ui-bundle.js", "/docs/init.js", "/docs/assets/swagger-ui.css"]) {
      const asset = await fetch(svc.url + src);
      expect(asset.status, src).toBe(200);
      expect(asset.headers.get("content-type"), src).toMatch(src.endsWith(".css") ? /^text\/css/ : /^(text|application)\/javascript/);
    }
    // The validator badge would load an image from a third party, which the policy refuses.
    expect(await (await fetch(`${svc.url}/docs/init.js`)).text()).toContain('validatorUrl: "none"');
  });

  it("never lets a new key be cached, nor any other /v1 answer", async () => {
    const created = await alice.api("/v1/auth/keys", { method: "POST", json: { name: "cached?" } });
    expect(created.status).toBe(201);
    expect(created.headers.get("cache-control")).toBe("no-store");
    for (const res of [
      await alice.api("/v1/auth/keys"),
      await alice.api("/v1/repositories"),
      await fetch(`${svc.url}/v1/repositories`),
      await alice.api("/v1/nothing"),
    ]) {
      expect(res.headers.get("cache-control"), `${res.url} ${res.status}`).toBe("no-store");
    }
  });
});
