import { describe, expect, it } from "vitest";
import { closest, keyValues, parseArgs, UsageError, type OptionSpec } from "./args.ts";
import { findCommand, GLOBAL_OPTIONS } from "./spec.ts";

const SPECS: OptionSpec[] = [
  { name: "follow", short: "f", help: "" },
  { name: "param", short: "p", value: "K=V", repeat: true, help: "" },
  { name: "output", short: "o", value: "FORMAT", choices: ["table", "json"], help: "" },
  { name: "limit", value: "N", help: "" },
];

describe("parseArgs", () => {
  it.each<[string[], unknown]>([
    [["repo"], { positionals: ["repo"], options: {}, rest: null }],
    [["repo", "-f", "main"], { positionals: ["repo", "main"], options: { follow: true }, rest: null }],
    [["--limit", "5"], { positionals: [], options: { limit: "5" }, rest: null }],
    [["--limit=5"], { positionals: [], options: { limit: "5" }, rest: null }],
    [["-ojson"], { positionals: [], options: { output: "json" }, rest: null }],
    [["-o", "json", "x"], { positionals: ["x"], options: { output: "json" }, rest: null }],
    [["-p", "a=1", "--param", "b=2", "-pc=3"], { positionals: [], options: { param: ["a=1", "b=2", "c=3"] }, rest: null }],
    // Everything after -- is the command's, its options included.
    [
      ["r", "-f", "--", "python3", "x.py", "--follow", "-o", "x"],
      { positionals: ["r"], options: { follow: true }, rest: ["python3", "x.py", "--follow", "-o", "x"] },
    ],
    [["r", "--"], { positionals: ["r"], options: {}, rest: [] }],
    // A negative number and a lone dash are arguments.
    [["-1", "-"], { positionals: ["-1", "-"], options: {}, rest: null }],
  ])("%j", (argv, expected) => {
    expect(parseArgs(argv, SPECS, { passthrough: true })).toEqual(expected);
  });

  it.each<[string[], RegExp]>([
    [["--folow"], /unknown option --folow \(did you mean --follow\?\)/],
    [["-x"], /unknown option -x/],
    [["--limit"], /--limit needs a value \(N\)/],
    [["--follow=yes"], /--follow takes no value/],
    [["-o", "yaml"], /--output must be one of table, json \(got "yaml"\)/],
  ])("refuses %j", (argv, message) => {
    expect(() => parseArgs(argv, SPECS, { passthrough: true })).toThrow(message);
  });

  it("refuses -- where the command takes no command", () => {
    expect(() => parseArgs(["--", "x"], SPECS)).toThrow(UsageError);
  });
});

describe("keyValues", () => {
  it("splits at the first =, later keys win, values may be empty or hold =", () => {
    expect(keyValues(["lr=0.1", "name=a=b", "empty=", "lr=0.2"], "-p")).toEqual({ lr: "0.2", name: "a=b", empty: "" });
  });
  it.each(["lr", "=1"])("refuses %j", (item) => {
    expect(() => keyValues([item], "-p")).toThrow(/-p takes key=value/);
  });
});

describe("closest", () => {
  it("finds prefixes and near misses, best first", () => {
    expect(closest("rpos", ["repos", "runs", "keys"])).toEqual(["repos", "runs"]);
    expect(closest("lim", ["limit", "follow"])).toEqual(["limit"]);
    expect(closest("zzzzzz", ["limit"])).toEqual([]);
  });
});

describe("findCommand", () => {
  it.each<[string[], string | null, number]>([
    [["runs", "ls", "--limit", "3"], "runs ls", 2],
    [["run", "repo", "--", "ls"], "run", 1],
    [["logs", "abc", "-f"], "logs", 1],
    [["files", "cat", "r", "p"], "files cat", 2],
  ])("%j is %s", (argv, words, used) => {
    const found = findCommand(argv);
    expect(found && "command" in found ? [found.command.words.join(" "), found.used] : null).toEqual([words, used]);
  });

  it("a group without its subcommand, and an unknown word", () => {
    expect(findCommand(["runs"])).toEqual({ group: "runs" });
    expect(findCommand(["runs", "nope"])).toEqual({ group: "runs" });
    expect(findCommand(["nope"])).toBeNull();
  });

  it("the global options are every command's", () => {
    expect(GLOBAL_OPTIONS.map((o) => o.name)).toEqual(["output", "context", "help"]);
  });
});
