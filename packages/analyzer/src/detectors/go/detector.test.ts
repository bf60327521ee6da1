import { beforeAll, describe, expect, it } from "vitest";
import type { Parameter } from "../../model.ts";
import { Syntax } from "../../syntax.ts";
import { detectGo } from "./detector.ts";
import { goFrameworks, parseGoMod } from "./mod.ts";
import { memoryContext } from "../../testing/memory-context.ts";

let syntax: Syntax;
beforeAll(async () => {
  syntax = await Syntax.load();
});

const context = (files: Record<string, string | null>, outOfTime = () => false) => memoryContext(files, { syntax, outOfTime });

function param(name: string, fields: Partial<Parameter>): Parameter {
  return { name, value: null, category: "string", cli_option: `-${name}`, choices: null, description: null, required: false, ...fields };
}

const main = (body: string, imports = '"flag"\n\t"os"\n\t"time"') => `package main\n\nimport (\n\t${imports}\n)\n\nfunc main() {\n${body}\n}\n`;

describe("go detector: programs", () => {
  it("finds each main package with its run command, title and doc comment", () => {
    const out = detectGo(
      context({
        "go.mod": "module github.com/acme/tool/v2\n\ngo 1.22\n",
        "main.go": "// Copyright Acme.\n\n// Tool does things.\n//go:generate stringer -type=Mode\npackage main\n\nfunc main() {}\n",
        "cmd/server/main.go": "/*\nServer serves.\n*/\npackage main\n\nfunc main() {}\n",
        "cmd/server/main_test.go": "package main\n\nfunc main() {}\n",
        "cmd/nomain/x.go": "package main\n\nfunc helper() {}\n",
        "cmd/method/x.go": "package main\n\ntype T struct{}\n\nfunc (T) main() {}\n",
        "cmd/args/x.go": "package main\n\nfunc main(x int) {}\n",
        "lib/lib.go": "package lib\n\nfunc main() {}\n",
        "tools/gen.go": "//go:build ignore\n\npackage main\n\nfunc main() {}\n",
        "tools/old.go": "// +build ignore\n\npackage main\n\nfunc main() {}\n",
        "third_party/vendor/x/main.go": "package main\n\nfunc main() {}\n",
        "pkg/testdata/main.go": "package main\n\nfunc main() {}\n",
        "cmd/binary/main.go": null,
      }),
    );
    expect(out.experiments.map((e) => [e.id, e.title, e.command.join(" "), e.path, e.description])).toEqual([
      ["go:.", "tool", "go run .", ".", "Tool does things."],
      ["go:./cmd/server", "server", "go run ./cmd/server", "cmd/server", "Server serves."],
    ]);
    expect(out.experiments[0]).toMatchObject({ kind: "go-main", language: "go", entry_point: "go run .", inputs: [], outputs: [], parameters: [] });
  });

  it("runs a package of a nested module from that module's folder, unless a go.work joins them", () => {
    const files = {
      "go.mod": "module example.com/root\n",
      "main.go": "package main\nfunc main() {}\n",
      "tools/go.mod": "module example.com/tools\n",
      "tools/cmd/lint/main.go": "package main\nfunc main() {}\n",
      "tools/main.go": "package main\nfunc main() {}\n",
    };
    expect(detectGo(context(files)).experiments.map((e) => e.command.join(" "))).toEqual(["go run .", "go -C tools run .", "go -C tools run ./cmd/lint"]);
    expect(detectGo(context({ ...files, "go.work": "go 1.22\nuse (\n\t.\n\t./tools\n)\n" })).experiments.map((e) => e.command.join(" "))).toEqual([
      "go run .",
      "go run ./tools",
      "go run ./tools/cmd/lint",
    ]);
  });

  it("stops when the time budget is spent", () => {
    expect(detectGo(context({ "main.go": "package main\nfunc main() {}\n" }, () => true))).toEqual({ experiments: [], envVars: [], frameworks: [] });
  });

  it("survives hostile input: long concatenations, deep nesting, junk", () => {
    const usage = Array.from({ length: 20_000 }, (_, i) => `"${i % 10}"`).join(" + ");
    const deep = `${"(".repeat(5000)}os.Getenv("DEEP")${")".repeat(5000)}`;
    const out = detectGo(
      context({
        "main.go": main(`\tflag.String("long", "", ${usage})\n\t_ = ${deep}`),
        "junk.go": "\u0000\uffff package main func main( {{{{",
        "empty.go": "",
      }),
    );
    expect(out.experiments[0]!.parameters[0]!.description).toHaveLength(4096);
    expect(out.envVars.map((e) => e.name)).toEqual(["DEEP"]);
  });

  it("keeps what parses in a file with syntax errors", () => {
    const out = detectGo(context({ "main.go": main('\tn := flag.Int("n", 1, "count")\n\t_ = n\n\tfor {{{ )\n') }));
    expect(out.experiments.map((e) => e.parameters)).toEqual([[param("n", { value: 1, category: "integer", description: "count" })]]);
  });
});

describe("go detector: flags", () => {
  it("reads every flag function, pointer and Var forms", () => {
    const body = [
      '\ts := flag.String("name", "world", "who to greet")',
      '\ti := flag.Int("n", -3, "count")',
      '\ti64 := flag.Int64("big", 0x10, "big " + "count")',
      '\tu := flag.Uint("u", 1_000, "unsigned")',
      '\tu64 := flag.Uint64("u64", 7, "")',
      '\tf := flag.Float64("ratio", 1e-3, "ratio")',
      '\tb := flag.Bool("v", true, "verbose")',
      '\td := flag.Duration("wait", 5*time.Second, "wait")',
      '\td2 := flag.Duration("tick", time.Millisecond * 250, "tick")',
      '\td3 := flag.Duration("zero", 0, "zero")',
      '\td4 := flag.Duration("unit", time.Minute, "unit")',
      '\td5 := flag.Duration("computed", base*2, "computed")',
      "\tvar x string",
      '\tflag.StringVar(&x, "x", defaultX, "a `path` to read")',
      '\tflag.BoolVar(&dry, "dry-run", false, "dry run")',
      '\tflag.IntVar(&k, "k", len(os.Args), `raw usage`)',
      '\tflag.Func("tag", "a tag", func(s string) error { return nil })',
      '\tflag.BoolFunc("trace", "trace", func(string) error { return nil })',
      '\tflag.Var(&list, "item", "an item")',
      '\tflag.TextVar(&ip, "ip", net.IPv4(127, 0, 0, 1), "address")',
      '\tflag.String(name, "dynamic", "skipped")',
      '\tflag.String("name", "again", "a duplicate")',
      '\tfs := flag.NewFlagSet("sub", flag.ExitOnError)',
      '\tfs.String("sub-only", "", "on a FlagSet")',
    ].join("\n");
    expect(detectGo(context({ "main.go": main(body) })).experiments[0]!.parameters).toEqual([
      param("name", { value: "world", description: "who to greet" }),
      param("n", { value: -3, category: "integer", description: "count" }),
      param("big", { value: 16, category: "integer", description: "big count" }),
      param("u", { value: 1000, category: "integer", description: "unsigned" }),
      param("u64", { value: 7, category: "integer" }),
      param("ratio", { value: 0.001, category: "number", description: "ratio" }),
      param("v", { value: true, category: "boolean", cli_option: "-v=", description: "verbose" }),
      param("wait", { value: "5s", description: "wait" }),
      param("tick", { value: "250ms", description: "tick" }),
      param("zero", { value: "0s", description: "zero" }),
      param("unit", { value: "1m", description: "unit" }),
      param("computed", { description: "computed" }),
      param("x", { description: "a path to read" }),
      param("dry-run", { value: false, category: "boolean", cli_option: "-dry-run=", description: "dry run" }),
      param("k", { category: "integer", description: "raw usage" }),
      param("tag", { description: "a tag" }),
      param("trace", { value: false, category: "flag", description: "trace" }),
      param("item", { description: "an item" }),
      param("ip", { description: "address" }),
    ]);
  });

  it("follows the name flag is imported under, and ignores files that do not import it", () => {
    const aliased = main('\tn := cli.Int("n", 2, "n")\n\tm := flag.Int("m", 3, "not the flag package")', 'cli "flag"');
    expect(detectGo(context({ "main.go": aliased })).experiments[0]!.parameters.map((p) => p.name)).toEqual(["n"]);
    const none = main('\tflag.Int("n", 2, "n")', '"fmt"');
    expect(detectGo(context({ "main.go": none })).experiments[0]!.parameters).toEqual([]);
  });

  it("collects flags from every file of the package, in path order", () => {
    const out = detectGo(
      context({
        "cmd/a/flags.go": 'package main\n\nimport "flag"\n\nvar b = flag.Bool("b", false, "")\n',
        "cmd/a/main.go": 'package main\n\nimport "flag"\n\nvar a = flag.String("a", "", "")\n\nfunc main() { flag.Parse() }\n',
      }),
    );
    expect(out.experiments[0]!.parameters.map((p) => p.name)).toEqual(["b", "a"]);
  });
});

describe("go detector: constant defaults and positional arguments", () => {
  it.each<[string, Parameter["value"], Parameter["category"]]>([
    ['flag.Int("n", 1<<16, "")', 65536, "integer"],
    ['flag.Int("n", 2*4, "")', 8, "integer"],
    ['flag.Int("n", 7/2, "")', 3, "integer"],
    ['flag.Int("n", (10+5)%4, "")', 3, "integer"],
    ['flag.Float64("n", 1.5*2, "")', 3, "number"],
    ['flag.Float64("n", 1/4.0, "")', 0.25, "number"],
    ['flag.Int("n", 1/0, "")', null, "integer"],
    ['flag.Int("n", 1<<70, "")', null, "integer"],
    ['flag.Int("n", size*2, "")', null, "integer"],
    ['flag.String("n", "a"+"b", "")', "ab", "string"],
  ])("%s", (call, value, category) => {
    const [e] = detectGo(context({ "main.go": main(`\t_ = ${call}\n\tflag.Parse()`) })).experiments;
    expect(e!.parameters).toEqual([param("n", { value, category })]);
  });

  it.each<[string, string, [string, boolean][]]>([
    [
      "named by the usage line, the rest required by NArg",
      'flag.Usage = func() { fmt.Fprintln(os.Stderr, "usage: scan [-v] [-since d] pattern file...") }\nif flag.NArg() < 2 { os.Exit(2) }\nre := flag.Arg(0)\nfor _, f := range flag.Args()[1:] { use(re, f) }',
      [
        ["pattern", true],
        ["file", true],
      ],
    ],
    [
      "named by their variables, != demands both",
      "if flag.NArg() != 2 { os.Exit(2) }\nsrc, dst := flag.Arg(0), flag.Arg(1)\nuse(src, dst)",
      [
        ["src", true],
        ["dst", true],
      ],
    ],
    [
      "an index skipped is still a position",
      "var out = flag.Arg(1)\nuse(out)",
      [
        ["arg0", false],
        ["out", false],
      ],
    ],
    ["all the arguments, ranged over", "for _, path := range flag.Args() { use(path) }", [["path", false]]],
    ["all the arguments, assigned", "files := flag.Args()\nif len(files) == 0 { return }", [["files", false]]],
    ["all the arguments, len checked", "if len(flag.Args()) < 1 { os.Exit(1) }\nfor a := range flag.Args() { use(a) }", [["args", true]]],
    ["indexed", "if flag.NArg() == 0 { os.Exit(1) }\nname := flag.Args()[0]\nuse(name)", [["name", true]]],
    ["none", "flag.Parse()", []],
  ])("%s", (_, body, want) => {
    const [e] = detectGo(context({ "main.go": main(body, '"flag"\n\t"fmt"\n\t"os"') })).experiments;
    expect(e!.parameters.map((p) => [p.name, p.required])).toEqual(want);
    expect(e!.parameters.every((p) => p.cli_option === null && p.category === "string" && p.value === null)).toBe(true);
  });
});

describe("go detector: environment variables", () => {
  const cases: [string, string, [string, boolean][]][] = [
    [
      "Getenv is required, LookupEnv is not",
      '\ta := os.Getenv("A")\n\t_, ok := os.LookupEnv("B")\n\t_, _ = a, ok',
      [
        ["A", true],
        ["B", false],
      ],
    ],
    ["a default after the read", '\tport := os.Getenv("PORT")\n\tif port == "" {\n\t\tport = "8080"\n\t}', [["PORT", false]]],
    [
      "a guard that stops",
      '\taddr := os.Getenv("ADDR")\n\tif addr == "" {\n\t\tlog.Fatal("ADDR must be set")\n\t}\n\tif os.Getenv("KEY") == "" {\n\t\tpanic("KEY")\n\t}',
      [
        ["ADDR", true],
        ["KEY", true],
      ],
    ],
    [
      "direct comparisons and tests in an if initializer",
      '\tif os.Getenv("DEBUG") == "1" {\n\t}\n\tif v := os.Getenv("MODE"); v != "" {\n\t}\n\tif len(os.Getenv("L")) > 0 {\n\t}',
      [
        ["DEBUG", false],
        ["MODE", false],
        ["L", true],
      ],
    ],
    ["len of a stored value", '\tx := os.Getenv("X")\n\tif len(x) == 0 {\n\t\tx = "d"\n\t}', [["X", false]]],
    [
      "cmp.Or with a fallback after it",
      '\ta := cmp.Or(os.Getenv("A"), "d")\n\tb := cmp.Or("d", os.Getenv("B"))\n\t_, _ = a, b',
      [
        ["A", false],
        ["B", true],
      ],
    ],
    ["only literal names", '\tname := "N"\n\t_ = os.Getenv(name)\n\t_ = os.Getenv("P" + "Q")', [["PQ", true]]],
    ["os under another name", '\t_ = xos.Getenv("A")\n\t_ = os.Getenv("NOT_OS")', [["A", true]]],
  ];
  it.each(cases)("%s", (_name, body, expected) => {
    const imports = _name === "os under another name" ? 'xos "os"' : '"cmp"\n\t"log"\n\t"os"';
    const out = detectGo(context({ "main.go": main(body, imports) }));
    expect(out.envVars.map((e) => [e.name, e.required])).toEqual(expected);
  });

  it("reads every non-test package, keeps the first use and each file's required one, and skips build-ignored files", () => {
    const out = detectGo(
      context({
        "a/a.go": 'package a\n\nimport (\n\t"cmp"\n\t"os"\n)\n\nvar x = cmp.Or(os.Getenv("X"), "d")\n',
        "b/b.go": 'package b\n\nimport "os"\n\n\nvar x = os.Getenv("X")\n',
        "b/b_test.go": 'package b\n\nimport "os"\n\nvar t = os.Getenv("T")\n',
        "gen.go": '//go:build ignore\n\npackage main\n\nimport "os"\n\nvar g = os.Getenv("G")\n',
        "vendor/v/v.go": 'package v\n\nimport "os"\n\nvar v = os.Getenv("V")\n',
      }),
    );
    expect(out.envVars).toEqual([
      { name: "X", path: "a/a.go", line: 8, required: false },
      { name: "X", path: "b/b.go", line: 6, required: true },
    ]);
    expect(out.experiments).toEqual([]);
  });
});

describe("go.mod", () => {
  it("reads the module path and requires, single and in blocks", () => {
    const mod = parseGoMod(
      [
        "// the tool",
        'module "github.com/acme/tool"',
        "",
        "go 1.22",
        "",
        "require github.com/spf13/cobra v1.8.0",
        "require (",
        "\tgithub.com/labstack/echo/v4 v4.11.4 // indirect",
        "\tgithub.com/gin-gonic/gin-contrib v1.0.0",
        ")",
        "replace (",
        "\tk8s.io/client-go => ../client-go",
        ")",
      ].join("\n"),
    );
    expect(mod).toEqual({
      module: "github.com/acme/tool",
      requires: ["github.com/spf13/cobra", "github.com/labstack/echo/v4", "github.com/gin-gonic/gin-contrib"],
    });
    expect(goFrameworks(mod.requires)).toEqual(["Echo", "Cobra"]);
  });

  it("reports frameworks from every go.mod", () => {
    const out = detectGo(
      context({
        "go.mod": "module a\nrequire google.golang.org/grpc v1.0.0\n",
        "x/go.mod": "module b\nrequire (\n\tk8s.io/client-go v0.30.0\n\tgithub.com/gofiber/fiber/v2 v2.52.0\n)\n",
      }),
    );
    expect(out.frameworks).toEqual(["Fiber", "gRPC", "client-go"]);
  });
});
