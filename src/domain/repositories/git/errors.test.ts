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
});

describe("gitRemoteError", () => {
  it("maps client problems to bad_request and server problems to unavailable", () => {
    expect(gitRemoteError("not_a_repository", "h", 1000).kind).toBe("bad_request");
    expect(gitRemoteError("auth_required", "h", 1000).kind).toBe("bad_request");
    expect(gitRemoteError("redirect", "h", 1000).kind).toBe("bad_request");
    expect(gitRemoteError("unreachable", "h", 1000).kind).toBe("unavailable");
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
