import { describe, expect, it } from "vitest";
import { classifyGitFailure, gitRemoteError, redactUrls } from "./errors.ts";

describe("classifyGitFailure", () => {
  // Real stderr from git 2.39 (LC_ALL=C) for each case.
  it.each([
    ["fatal: unable to access 'https://h/x.git/': The requested URL returned error: 301", "redirect"],
    ["fatal: repository 'https://h/x.git/' not found", "not_a_repository"],
    ["fatal: '/nope' does not appear to be a git repository\nfatal: Could not read from remote repository.", "not_a_repository"],
    ["fatal: https://h/x.git/info/refs not valid: is this a git repository?", "not_a_repository"],
    // Local repositories (CODEPLANE_ALLOW_LOCAL_REPOSITORIES): a missing path, a directory, a file (found by make fuzz).
    ["fatal: repository '/\u00a2\u9fcf+5' does not exist", "not_a_repository"],
    ["fatal: repository '/tmp' does not exist", "not_a_repository"],
    ["error: '/etc/hostname' does not look like a v2 or v3 bundle file\nfatal: invalid gitfile format: /etc/hostname", "not_a_repository"],
    ["fatal: could not read Username for 'https://h': terminal prompts disabled", "auth_required"],
    ["remote: Invalid username or password.\nfatal: Authentication failed for 'https://h/x.git/'", "auth_required"],
    ["fatal: unable to access 'https://h/x.git/': The requested URL returned error: 403", "auth_required"],
    ["git@h: Permission denied (publickey).", "auth_required"],
    ["fatal: unable to access 'https://h/x.git/': Could not resolve host: h", "unreachable"],
    ["fatal: unable to access 'https://h/x.git/': Failed to connect to h port 443: Connection refused", "unreachable"],
    ["fatal: unable to access 'https://h/': SSL certificate problem: self signed certificate", "unreachable"],
    ["fatal: transport 'file' not allowed", "refused"],
    ["fatal: something entirely new", "failed"],
  ])("%s -> %s", (stderr, reason) => {
    expect(classifyGitFailure(stderr)).toBe(reason);
  });

  // Real stderr from git 2.39 (LC_ALL=C) of `git clone --bare` and `git fetch`
  // (the mirror's commands) against a bare repository with an object file
  // deleted, over each transport, and against a healthy one whose connection
  // was cut mid-pack by a proxy. Both print `early EOF` and `invalid
  // index-pack output`: the other lines decide.
  const REMOTE_CORRUPTION = "remote: aborting due to possible repository corruption on the remote side. ";
  it.each([
    [
      "file://, a blob missing",
      [
        "remote: fatal: unable to read 9a665d3f532dd0219efdf6eafc4510c9f6a20610        ",
        "error: git upload-pack: git-pack-objects died with error.",
        "fatal: git upload-pack: aborting due to possible repository corruption on the remote side.",
        REMOTE_CORRUPTION,
        "fatal: early EOF",
        "fatal: fetch-pack: invalid index-pack output",
      ],
      "damaged",
    ],
    [
      "file://, a parent commit missing",
      [
        "remote: error: Could not read 5a03878a6daf69e7c04019630a3b9fcf42b82b6c        ",
        "remote: fatal: Failed to traverse parents of commit 4d466d852516880563d363ee660b07a4ecfd6e54        ",
        "error: git upload-pack: git-pack-objects died with error.",
        "fatal: git upload-pack: aborting due to possible repository corruption on the remote side.",
        REMOTE_CORRUPTION,
        "fatal: early EOF",
        "fatal: fetch-pack: invalid index-pack output",
      ],
      "damaged",
    ],
    [
      "git://, a blob missing",
      [
        "remote: fatal: unable to read 9a665d3f532dd0219efdf6eafc4510c9f6a20610        ",
        REMOTE_CORRUPTION,
        "fatal: early EOF",
        "fatal: fetch-pack: invalid index-pack output",
      ],
      "damaged",
    ],
    [
      "git://, fetch into an existing mirror, a new blob missing",
      ["remote: fatal: unable to read 3e757656cf36eca53338e520d134963a44f793f8        ", REMOTE_CORRUPTION, "fatal: protocol error: bad pack header"],
      "damaged",
    ],
    [
      "dumb HTTP, a blob missing",
      [
        "error: Unable to find 9a665d3f532dd0219efdf6eafc4510c9f6a20610 under http://127.0.0.1:19430/broken.git",
        "Cannot obtain needed blob 9a665d3f532dd0219efdf6eafc4510c9f6a20610",
        "while processing commit 5a03878a6daf69e7c04019630a3b9fcf42b82b6c.",
        "error: fetch failed.",
      ],
      "damaged",
    ],
    [
      "dumb HTTP, a commit missing",
      [
        "error: Unable to find 5a03878a6daf69e7c04019630a3b9fcf42b82b6c under http://127.0.0.1:19430/broken2.git",
        "Cannot obtain needed commit 5a03878a6daf69e7c04019630a3b9fcf42b82b6c",
        "while processing commit 4d466d852516880563d363ee660b07a4ecfd6e54.",
        "error: fetch failed.",
      ],
      "damaged",
    ],
    // git's own wording for an incomplete pack (fetch-pack.c, builtin/fetch.c), not reproduced here.
    ["an incomplete pack", ["error: remote did not send all necessary objects"], "damaged"],
    ["a bad object after the fetch", ["fatal: bad object refs/heads/main", "error: https://h/x.git did not send all necessary objects"], "damaged"],
    ["unpack-objects", ["error: unpack-objects failed"], "damaged"],
    [
      "git://, connection cut mid-pack",
      ["fetch-pack: unexpected disconnect while reading sideband packet", "fatal: early EOF", "fatal: fetch-pack: invalid index-pack output"],
      "unreachable",
    ],
    [
      "HTTPS, connection cut mid-pack (curl)",
      ["error: RPC failed; curl 18 transfer closed with outstanding read data remaining", "fatal: early EOF", "fatal: fetch-pack: invalid index-pack output"],
      "unreachable",
    ],
    ["early EOF and nothing else", ["fatal: early EOF"], "unreachable"],
    ["git://, nothing listening", ["fatal: unable to connect to 127.0.0.1:", "127.0.0.1[0: 127.0.0.1]: errno=Connection refused", ""], "unreachable"],
  ])("a broken remote: %s", (_name, stderr, reason) => {
    expect(classifyGitFailure(stderr.join("\n"))).toBe(reason);
  });
});

describe("gitRemoteError", () => {
  it("maps client problems to bad_request and server problems to unavailable", () => {
    expect(gitRemoteError("not_a_repository", "h", 1000).kind).toBe("bad_request");
    expect(gitRemoteError("auth_required", "h", 1000).kind).toBe("bad_request");
    expect(gitRemoteError("redirect", "h", 1000).kind).toBe("bad_request");
    expect(gitRemoteError("unreachable", "h", 1000).kind).toBe("unavailable");
    const damaged = gitRemoteError("damaged", "h", 1000);
    expect(damaged.kind).toBe("conflict");
    expect(damaged.message).toMatch(/^The repository at h is damaged: .*missing or corrupt objects/);
    const timeout = gitRemoteError("timeout", "github.com", 30_000);
    expect(timeout.kind).toBe("unavailable");
    expect(timeout.message).toBe("Fetching the repository at github.com timed out after 30s");
  });
});

describe("redactUrls", () => {
  it("drops userinfo from URLs in log text", () => {
    expect(redactUrls("fatal: unable to access 'https://user:s3cret@h/x.git/': 500")).toBe("fatal: unable to access 'https://[redacted]@h/x.git/': 500");
    expect(redactUrls("see https://h/x.git")).toBe("see https://h/x.git");
  });
});
