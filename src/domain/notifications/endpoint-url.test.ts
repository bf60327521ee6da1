import { describe, expect, it } from "vitest";
import { DomainError, DomainValidationError } from "../errors.ts";
import { checkEndpointUrl, guardedLookup } from "./endpoint-url.ts";

// The endpoint URL policy with a fake resolver: the clone URL policy's
// address rules applied to webhook URLs, at registration and on the address
// a delivery connects to.

const dns: Record<string, string[]> = {
  "hooks.example.com": ["93.184.215.14"],
  "v6.example.com": ["2606:2800:21f:cb07:6820:80da:af6b:8b2c"],
  "rebind.example.com": ["93.184.215.14", "10.0.0.7"],
  "meta.example.com": ["169.254.169.254"],
  "loop.example.com": ["127.0.0.1"],
  "mapped.example.com": ["::ffff:127.0.0.1"],
};
const lookup = async (host: string) => {
  const a = dns[host];
  if (!a) throw Object.assign(new Error("not found"), { code: "ENOTFOUND" });
  return a;
};

describe("registering an endpoint URL", () => {
  it.each([
    { url: "https://hooks.example.com/codeplane", want: "https://hooks.example.com/codeplane" },
    { url: "  https://HOOKS.example.com:8443/a?b=c  ", want: "https://hooks.example.com:8443/a?b=c" },
    { url: "https://v6.example.com/", want: "https://v6.example.com/" },
    { url: "https://93.184.215.14/x", want: "https://93.184.215.14/x" },
  ])("accepts $url", async ({ url, want }) => {
    expect(await checkEndpointUrl(url, { allowLocal: false, lookup })).toBe(want);
  });

  it.each([
    { url: "http://hooks.example.com/", why: /http:\/\// },
    { url: "ftp://hooks.example.com/", why: /https:\/\// },
    { url: "https://user:pw@hooks.example.com/", why: /credentials/ },
    { url: "https://hooks.example.com/#frag", why: /fragment/ },
    { url: "https://127.0.0.1/", why: /private, loopback/ },
    { url: "https://[::1]/", why: /private, loopback/ },
    { url: "https://[::ffff:10.0.0.1]/", why: /private, loopback/ },
    { url: "https://0x7f000001/", why: /private, loopback/ }, // the WHATWG parser reads it as 127.0.0.1
    { url: "https://169.254.169.254/", why: /private, loopback/ },
    { url: "https://localhost/", why: /private, loopback/ },
    { url: "https://x.localhost./", why: /private, loopback/ },
    { url: "https://intranet/", why: /fully qualified/ },
    { url: "https://rebind.example.com/", why: /resolves to a private/ },
    { url: "https://meta.example.com/", why: /resolves to a private/ },
    { url: "https://mapped.example.com/", why: /resolves to a private/ },
    { url: "https://nowhere.example.com/", why: /could not be resolved/ },
    { url: "https://hooks.example.com/a\x07b", why: /control/ },
    { url: "", why: /empty/ },
    { url: "https://" + "a".repeat(2100) + ".com/", why: /too long/ },
  ])("refuses $url on body.url", async ({ url, why }) => {
    const err = await checkEndpointUrl(url, { allowLocal: false, lookup }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DomainValidationError);
    expect((err as DomainValidationError).issues[0]).toMatchObject({ loc: ["body", "url"], type: "value_error", msg: expect.stringMatching(why) });
  });

  it("allows http:// and local addresses when local repositories are allowed", async () => {
    expect(await checkEndpointUrl("http://127.0.0.1:9/x", { allowLocal: true, lookup })).toBe("http://127.0.0.1:9/x");
    expect(await checkEndpointUrl("https://loop.example.com/", { allowLocal: true, lookup })).toBe("https://loop.example.com/");
  });

  it("answers unavailable when DNS fails for now", async () => {
    const err = await checkEndpointUrl("https://hooks.example.com/", {
      allowLocal: false,
      lookup: () => Promise.reject(Object.assign(new Error("timeout"), { code: "EAI_AGAIN" })),
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DomainError);
    expect((err as DomainError).kind).toBe("unavailable");
  });
});

describe("the address a delivery connects to", () => {
  const resolve = (host: string, allowLocal: boolean, options: { all?: boolean; family?: number } = {}) =>
    new Promise<{ err: NodeJS.ErrnoException | null; address: unknown }>((r) =>
      guardedLookup(allowLocal, lookup)(host, options, (err, address) => r({ err, address })),
    );

  it.each([
    { host: "hooks.example.com", allowLocal: false, ok: true },
    { host: "rebind.example.com", allowLocal: false, ok: false },
    { host: "loop.example.com", allowLocal: false, ok: false },
    { host: "meta.example.com", allowLocal: false, ok: false },
    { host: "loop.example.com", allowLocal: true, ok: true },
    { host: "nowhere.example.com", allowLocal: true, ok: false },
  ])("$host (local allowed: $allowLocal): connects $ok", async ({ host, allowLocal, ok }) => {
    const { err, address } = await resolve(host, allowLocal);
    if (ok) {
      expect(err).toBeNull();
      expect(address).toBe(dns[host]![0]);
    } else expect(err).toBeInstanceOf(Error);
  });

  it("refuses with the policy's own code, and answers the all form", async () => {
    expect((await resolve("loop.example.com", false)).err?.code).toBe("EADDRNOTALLOWED");
    expect((await resolve("hooks.example.com", false, { all: true })).address).toEqual([{ address: "93.184.215.14", family: 4 }]);
    expect((await resolve("hooks.example.com", false, { family: 6 })).err?.code).toBe("ENOTFOUND");
  });
});
