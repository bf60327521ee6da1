import { describe, expect, it } from "vitest";
import { accountNames, isLocalPath, OidcRefusal } from "./oidc.ts";

const cfg = (accountClaim: string, accounts: [string, string][] | null = null) => ({ accountClaim, accounts, providerName: "IdP" });

describe("accountNames", () => {
  it("reads a verified email's domain, case-insensitively, through the mapping", () => {
    expect(accountNames({ email: "Alice@ACME.com", email_verified: true }, cfg("email", [["acme.com", "acme"]]))).toEqual({
      values: ["acme.com"],
      names: ["acme"],
    });
    expect(accountNames({ email: "a@acme.com", email_verified: true }, cfg("email"))).toEqual({ values: ["acme.com"], names: ["acme.com"] });
    expect(accountNames({ email: "a@other.com", email_verified: true }, cfg("email", [["acme.com", "acme"]])).names).toEqual([]);
  });
  it("refuses an unverified or missing email", () => {
    expect(() => accountNames({ email: "a@acme.com" }, cfg("email"))).toThrow(OidcRefusal);
    expect(() => accountNames({ email: "a@acme.com", email_verified: "true" }, cfg("email"))).toThrow(/not verified/);
    expect(() => accountNames({}, cfg("email"))).toThrow(/did not tell/);
  });
  it("reads a list claim: the first pair of the mapping that matches wins", () => {
    const groups = { groups: ["staff", "platform-team", "ml"] };
    expect(
      accountNames(
        groups,
        cfg("groups", [
          ["ml", "research"],
          ["platform-team", "platform"],
        ]),
      ).names,
    ).toEqual(["research"]);
    expect(accountNames(groups, cfg("groups")).names).toEqual(["staff", "platform-team", "ml"]);
    expect(accountNames({ groups: "ml" }, cfg("groups", [["ML", "research"]])).names).toEqual([]); // exact, case-sensitive
    expect(accountNames({ groups: [1, null] }, cfg("groups")).names).toEqual([]);
  });
});

describe("isLocalPath", () => {
  it("accepts only paths on this server", () => {
    expect(isLocalPath("/oauth/authorize?x=1")).toBe(true);
    for (const bad of ["//evil.example/", "/\\evil.example", "https://evil.example/", "evil", "/a\nb"]) expect(isLocalPath(bad), bad).toBe(false);
  });
});
