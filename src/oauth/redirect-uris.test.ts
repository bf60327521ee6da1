import { describe, expect, it } from "vitest";
import { matchRedirectUri, redirectUriProblem } from "./redirect-uris.ts";

describe("redirect URIs", () => {
  it.each([
    ["https://app.example/cb", true],
    ["https://app.example/cb?x=1", true],
    ["http://127.0.0.1/cb", true],
    ["http://[::1]:8080/cb", true],
    ["http://localhost:3000/callback", true],
    ["http://app.example/cb", false],
    ["http://127.0.0.1.example.com/cb", false],
    ["https://app.example/cb#x", false],
    ["https://user:pw@app.example/cb", false],
    ["myapp:/cb", false],
    ["javascript:alert(1)", false],
    ["/relative", false],
    ["https://app.example/c b", false],
    [42, false],
  ])("%s can be registered: %s", (uri, ok) => {
    expect(redirectUriProblem(uri) === null).toBe(ok);
  });

  const registered = ["https://app.example/cb", "http://127.0.0.1/cb", "http://localhost:9000/cb?x=1"];
  it.each([
    ["https://app.example/cb", true],
    ["https://app.example/cb/", false],
    ["https://app.example:443/cb", false],
    ["https://APP.example/cb", false],
    ["https://app.example/cb?x=1", false],
    ["http://127.0.0.1:51234/cb", true], // RFC 8252: any port on loopback
    ["http://127.0.0.1:51234/cb2", false],
    ["http://127.0.0.1:51234/cb?y=2", false],
    ["http://localhost:1234/cb?x=1", true],
    ["http://[::1]:1234/cb", false], // another loopback host than registered
    ["http://127.0.0.1:51234/cb#f", false],
  ])("%s matches: %s", (uri, ok) => {
    expect(matchRedirectUri(registered, uri) !== null).toBe(ok);
  });
});
