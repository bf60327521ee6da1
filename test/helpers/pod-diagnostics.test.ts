import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { capturesFor, fileSafe, saveDiagnostics, tail } from "./pod-diagnostics.ts";

// Cluster suites' failure diagnostics without a cluster: kubectl is a fake
// that answers from a table (the suite itself needs `make test-helm`).

describe("fileSafe", () => {
  it.each([
    ["installs with the README's commands: two replicas", "installs-with-the-README-s-commands-two-replicas"],
    ["codeplane-7d9f/x", "codeplane-7d9f-x"],
    ["../../etc", "..-..-etc"],
    ["", "step"],
    ["x".repeat(300), "x".repeat(100)],
  ])("%j -> %j", (name, want) => {
    expect(fileSafe(name)).toBe(want);
  });
});

describe("tail", () => {
  it("keeps short text as it is", () => {
    expect(tail("a\nb\n", 5, 100)).toBe("a\nb");
  });
  it("keeps the last lines and says how much it left out", () => {
    const text = Array.from({ length: 100 }, (_, i) => `line ${i}`).join("\n");
    const got = tail(text, 3, 1_000);
    expect(got.split("\n").slice(1)).toEqual(["line 97", "line 98", "line 99"]);
    expect(got).toMatch(/^\[\.\.\. \d+ characters before\]/);
  });
  it("bounds characters too (one huge line)", () => {
    const got = tail("y".repeat(100_000), 30, 4_000);
    expect(got.length).toBeLessThan(4_100);
    expect(got.endsWith("y".repeat(4_000))).toBe(true);
  });
});

describe("capturesFor", () => {
  it("asks for events and pods per namespace and each pod's logs, all containers, the previous ones too", () => {
    const captures = capturesFor([{ namespace: "codeplane", name: "codeplane-abc" }], ["codeplane", "codeplane-runs"]);
    expect(captures.map((c) => c.file)).toEqual([
      "codeplane.events.txt",
      "codeplane.pods.txt",
      "codeplane.describe-pods.txt",
      "codeplane-runs.events.txt",
      "codeplane-runs.pods.txt",
      "codeplane-runs.describe-pods.txt",
      "codeplane.codeplane-abc.log",
      "codeplane.codeplane-abc.previous.log",
    ]);
    const previous = captures.at(-1)!.args;
    expect(previous).toEqual(expect.arrayContaining(["logs", "codeplane-abc", "--all-containers", "--previous"]));
  });
});

describe("saveDiagnostics", () => {
  let folder = "";
  afterEach(() => rmSync(folder, { recursive: true, force: true }));

  it("writes one file per capture, kubectl's error for one that fails, and a bounded tail to the log", async () => {
    folder = mkdtempSync(path.join(tmpdir(), "codeplane-diag-test-"));
    const kubectl = (...args: string[]) => {
      const cmd = args.join(" ");
      if (cmd === "-n codeplane get pods -o name") return Promise.resolve("pod/api-1\n");
      if (cmd === "-n codeplane-runs get pods -o name") return Promise.reject(new Error("namespaces not found"));
      if (cmd.includes("--previous")) return Promise.reject(new Error("previous terminated container not found"));
      if (cmd.includes("logs api-1")) return Promise.resolve(Array.from({ length: 500 }, (_, i) => `log line ${i}`).join("\n"));
      return Promise.resolve(`output of ${cmd}\n`);
    };
    const logged: string[] = [];
    const out = await saveDiagnostics({ kubectl, namespaces: ["codeplane", "codeplane-runs"], folder, step: "passes helm test", log: (t) => logged.push(t) });

    expect(out).toBe(path.join(folder, "passes-helm-test"));
    expect(readdirSync(out).sort()).toEqual(
      [
        "codeplane.api-1.log",
        "codeplane.api-1.previous.log",
        "codeplane.describe-pods.txt",
        "codeplane.events.txt",
        "codeplane.pods.txt",
        "codeplane-runs.describe-pods.txt",
        "codeplane-runs.events.txt",
        "codeplane-runs.pods.txt",
      ].sort(),
    );
    expect(readFileSync(path.join(out, "codeplane.api-1.log"), "utf8").split("\n")).toHaveLength(500);
    expect(readFileSync(path.join(out, "codeplane.api-1.previous.log"), "utf8")).toMatch(/failed: previous terminated container not found/);
    expect(logged).toHaveLength(1);
    expect(logged[0]).toContain(out);
    expect(logged[0]).toContain("log line 499");
    expect(logged[0]).not.toContain("log line 400\n");
    expect(logged[0]!.length).toBeLessThan(8 * 4_200);
  });
});
