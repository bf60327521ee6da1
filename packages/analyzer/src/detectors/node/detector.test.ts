import { beforeAll, describe, expect, it } from "vitest";
import type { Parameter } from "../../model.ts";
import { Syntax } from "../../syntax.ts";
import { detectNode } from "./detector.ts";
import { memoryContext } from "../../testing/memory-context.ts";

let syntax: Syntax;
beforeAll(async () => {
  syntax = await Syntax.load();
});

const context = (files: Record<string, string | null>, outOfTime = () => false) => memoryContext(files, { syntax, outOfTime });

const pkg = (value: unknown) => JSON.stringify(value);

function param(name: string, fields: Partial<Parameter>): Parameter {
  return { name, value: null, category: "string", cli_option: `--${name}`, choices: null, description: null, required: false, ...fields };
}

/** The parameters the `start` script (`node cli.<ext>`) gets from the given source. */
function paramsOf(source: string, ext = "js"): Parameter[] {
  const out = detectNode(context({ "package.json": pkg({ scripts: { start: `node cli.${ext}` } }), [`cli.${ext}`]: source }));
  return out.experiments.find((e) => e.id === "npm:start")?.parameters ?? [];
}

describe("node detector: package.json", () => {
  it("lists scripts without lifecycle hooks, root and nested, sorted by name", () => {
    const out = detectNode(
      context({
        "package.json": pkg({
          scripts: {
            test: "vitest",
            pretest: "eslint .",
            postinstall: "patch-package",
            prepare: "husky",
            prepublishOnly: "tsc",
            preview: "vite preview",
            "build all": "x",
            weird: 42,
            start: "node server.js",
          },
        }),
        "apps/api/package.json": pkg({ scripts: { dev: "tsx watch src/main.ts" } }),
        "broken/package.json": "{ not json",
        "array/package.json": "[1, 2]",
      }),
    );
    expect(out.experiments.map((e) => [e.id, e.command.join(" "), e.path])).toEqual([
      ["npm:apps/api:dev", "npm --prefix apps/api run dev --", "apps/api/package.json"],
      ["npm:preview", "npm run preview --", "package.json"],
      ["npm:start", "npm run start --", "package.json"],
      ["npm:test", "npm run test --", "package.json"],
    ]);
    const start = out.experiments.find((e) => e.id === "npm:start")!;
    expect(start).toMatchObject({ title: "start", description: "node server.js", entry_point: "npm run start --", kind: "npm-script", language: "javascript" });
  });

  it("turns bins into node commands, named after the package without its scope", () => {
    const out = detectNode(
      context({
        "package.json": pkg({ name: "@acme/tool", description: "Does things", bin: "./bin/tool.js" }),
        "tools/package.json": pkg({ name: "x", bin: { zeta: "z.ts", alpha: "a.js", escape: "../../etc/passwd", empty: "" } }),
        "bin/tool.js": "#!/usr/bin/env node\nconsole.log(1)\n",
      }),
    );
    expect(out.experiments.map((e) => [e.id, e.command, e.language, e.description])).toEqual([
      ["node-bin:tool", ["node", "bin/tool.js"], "javascript", "Does things"],
      ["node-bin:alpha", ["node", "tools/a.js"], "javascript", null],
      ["node-bin:zeta", ["node", "tools/z.ts"], "typescript", null],
    ]);
  });

  it("reports frameworks named in dependencies, and only those", () => {
    const out = detectNode(
      context({
        "package.json": pkg({ dependencies: { express: "4", lodash: "4", yargs: "17" }, devDependencies: { vitest: "1", typescript: "5" } }),
        "web/package.json": pkg({ dependencies: { next: "14", react: "18" } }),
      }),
    );
    expect(out.frameworks).toEqual(["Express", "Next.js", "React", "TypeScript", "Vitest", "yargs"]);
  });

  it.each([
    ["node cli.js", true],
    ["NODE_ENV=production node --enable-source-maps -r dotenv/config cli", true],
    ["cross-env DEBUG=1 tsx watch cli.js", true],
    ["npx ts-node cli.js --fast", true],
    ["node cli.js && node other.js", false],
    ["node -e 'require(\"./cli.js\")'", false],
    ["node missing.js", false],
    ["node ../outside.js", false],
    ["python cli.js", false],
  ])("script %j reads its options from cli.js: %s", (command, found) => {
    const out = detectNode(
      context({
        "package.json": pkg({ scripts: { start: command } }),
        "cli.js": 'const { program } = require("commander");\nprogram.option("--fast", "go fast").parse();\n',
      }),
    );
    expect(out.experiments[0]!.parameters.map((p) => p.name)).toEqual(found ? ["fast"] : []);
  });

  it("takes the language from the entry file and files it names from fs calls", () => {
    const out = detectNode(
      context({
        "package.json": pkg({ scripts: { go: "tsx src/main.ts" } }),
        "src/main.ts": [
          'import { readFileSync, writeFileSync, createWriteStream } from "node:fs";',
          'const cfg = readFileSync("config.json", "utf8");',
          "const name = readFileSync(process.argv[2]!, 'utf8');",
          'writeFileSync(process.argv[3] ?? "out/result.json", cfg);',
          "createWriteStream(`logs/${Date.now()}.log`);",
          'fs.promises.readFile("data/a.csv");',
        ].join("\n"),
      }),
    );
    expect(out.experiments[0]).toMatchObject({ language: "typescript", inputs: ["config.json", "data/a.csv"], outputs: ["out/result.json"] });
  });

  it("survives hostile input: huge manifests, deep nesting, junk", () => {
    const scripts = Object.fromEntries(Array.from({ length: 3000 }, (_, i) => [`s${i}`, "x".repeat(5000)]));
    const deep = `const a = ${"(".repeat(3000)}process.env.DEEP${")".repeat(3000)} ?? "d";`;
    const out = detectNode(
      context({
        "package.json": pkg({ name: 42, bin: ["x"], scripts, dependencies: "express" }),
        "x/package.json": "null",
        "y/package.json": null,
        "deep.js": deep,
        "junk.js": "\u0000 process.env. }}}} ((( process.env[",
      }),
    );
    expect(out.experiments).toHaveLength(3000);
    expect(out.experiments[0]!.description).toHaveLength(4096);
    expect(out.envVars.map((e) => [e.name, e.required])).toEqual([["DEEP", false]]);
    // What it survives is the point, not how fast: about 1 s alone, 5+ s beside a loaded suite (CI's bound would fail it).
  }, 60_000);

  it("stops when the time budget is spent", () => {
    const out = detectNode(context({ "package.json": pkg({ scripts: { a: "x" } }), "a.js": "process.env.A" }, () => true));
    expect(out).toEqual({ experiments: [], envVars: [], frameworks: [] });
  });
});

describe("node detector: commander", () => {
  it("reads each kind of option the way commander does", () => {
    const source = `
      const { Command, Option, Argument } = require("commander");
      const program = new Command();
      program
        .argument("<input>", "file to read")
        .argument("[more...]")
        .addArgument(new Argument("<mode>", "how"))
        .option("-n, --count <n>", "how many", 3)
        .option("--ratio [r]", "ratio", 0.5)
        .option("-t, --threshold <value>", "minimum", parseInt)
        .option("--scale <s>", "scale", (v) => parseFloat(v), 1)
        .option("--name <name>", "who", computeName())
        .requiredOption("--api-key <key>", "the key")
        .requiredOption("--region <r>", "region", "eu")
        .option("-d, --dry-run", "dry run")
        .option("--no-color")
        .option("-v")
        .addOption(new Option("--mode <m>", "mode").choices(["a", "b"]).default("a").makeOptionMandatory())
        .addOption(new Option("--level <l>").choices(["x", pick()]));
      program.command("serve").option("--port <p>", "port", 80);
      program.parse();
    `;
    expect(paramsOf(source)).toEqual([
      param("input", { cli_option: null, description: "file to read", required: true }),
      param("more", { cli_option: null }),
      param("mode", { cli_option: null, description: "how", required: true }),
      param("count", { value: 3, category: "integer", description: "how many" }),
      param("ratio", { value: 0.5, category: "number", description: "ratio" }),
      param("threshold", { category: "integer", description: "minimum" }),
      param("scale", { value: 1, category: "number", description: "scale" }),
      param("name", { description: "who" }),
      param("apiKey", { cli_option: "--api-key", description: "the key", required: true }),
      param("region", { value: "eu", description: "region" }),
      param("dryRun", { value: false, category: "flag", cli_option: "--dry-run", description: "dry run" }),
      param("noColor", { value: false, category: "flag", cli_option: "--no-color" }),
      param("v", { value: false, category: "flag", cli_option: "-v" }),
      // "mode" is taken by the argument above: the first declaration wins.
      param("level", { choices: null }),
    ]);
  });

  it("reads an Option chain's choices, default and mandatory mark", () => {
    const source = `import { program, Option } from "commander";
      program.addOption(new Option("-m, --mode <m>", "mode").choices(["a", "b"] as const).default("a").makeOptionMandatory());
      program.addOption(new Option("--key <k>").makeOptionMandatory());`;
    // A mandatory option with a default is satisfied by it.
    expect(paramsOf(source, "ts")).toEqual([param("mode", { value: "a", choices: ["a", "b"], description: "mode" }), param("key", { required: true })]);
  });

  it("ignores .option() calls when the file does not load commander", () => {
    expect(paramsOf('const x = thing.option("--fast", "go fast");')).toEqual([]);
  });

  it("keeps what parses in a file with syntax errors", () => {
    expect(paramsOf('const { program } = require("commander");\nprogram.option("--ok <n>", "fine", 1);\nfunction (( {\n')).toEqual([
      param("ok", { value: 1, category: "integer", description: "fine" }),
    ]);
  });
});

describe("node detector: yargs and parseArgs", () => {
  it("reads yargs options, the default command's positionals and demandOption", () => {
    const source = `
      import yargs from "yargs";
      import { hideBin } from "yargs/helpers";
      const opts = { batch: { number: true, default: 32 } };
      yargs(hideBin(process.argv))
        .command("$0 <file> [extra]", "run", (y) => y.positional("file", { describe: "input", type: "string" }))
        .command("deploy <target>", "deploy", (y) => y.option("force", { type: "boolean" }))
        .option("count", { type: "number", default: 3, describe: "how many", choices: [1, 3, 5], alias: "c" })
        .option("lr", { type: "number", default: 1e-3 })
        .option("color", { type: "boolean", default: true })
        .option("quiet", { type: "boolean", desc: "less output" })
        .option("name", { type: "string", demandOption: "a name is needed" })
        .option("seed", { default: 7 })
        .option("tag", { default: someTag() })
        .options(opts)
        .demandOption(["tag"])
        .parse();
    `;
    expect(paramsOf(source, "mjs")).toEqual([
      param("file", { cli_option: null, description: "input", required: true }),
      param("extra", { cli_option: null }),
      param("count", { value: 3, category: "integer", choices: [1, 3, 5], description: "how many" }),
      param("lr", { value: 0.001, category: "number" }),
      param("color", { value: true, category: "boolean", cli_option: "--color=" }),
      param("quiet", { value: false, category: "flag", description: "less output" }),
      param("name", { required: true }),
      param("seed", { value: 7, category: "integer" }),
      param("tag", { required: true }),
      param("batch", { value: 32, category: "integer" }),
    ]);
  });

  it("reads parseArgs options written inline or as a constant", () => {
    const inline = `import { parseArgs } from "node:util";
      parseArgs({ options: { out: { type: "string", short: "o", default: "a.txt" }, verbose: { type: "boolean" }, list: { type: "string", multiple: true, default: ["x"] } } });`;
    expect(paramsOf(inline, "mjs")).toEqual([param("out", { value: "a.txt" }), param("verbose", { value: false, category: "flag" }), param("list", {})]);
    const constant = `const util = require("util");
      const options = { force: { type: "boolean", default: true } };
      const { values } = util.parseArgs({ options });`;
    expect(paramsOf(constant)).toEqual([param("force", { value: true, category: "flag" })]);
  });

  it.each<[string, Parameter["value"], Parameter["category"]]>([
    ["1024 * 1024", 1048576, "integer"],
    ["60 * 60 * 1000", 3600000, "integer"],
    ["2 ** 10", 1024, "integer"],
    ["1 << 4", 16, "integer"],
    ["10 / 4", 2.5, "number"],
    ["8 / 2", 4, "number"],
    ["0.5 * 3", 1.5, "number"],
    ["1 / 0", null, "string"],
    ["size * 2", null, "string"],
    ['"a" + "b"', null, "string"],
  ])("a commander default written as %s", (expr, value, category) => {
    const src = `const { program } = require("commander");\nprogram.option("--n <n>", "n", ${expr});\nprogram.parse();\n`;
    expect(paramsOf(src)).toEqual([param("n", { value, category, description: "n" })]);
  });

  it.each<[string, string, Parameter["value"], Parameter["category"]]>([
    ["parseInt", "parseInt(values.n, 10)", 8, "integer"],
    ["Number.parseInt", "Number.parseInt(args.values.n)", 8, "integer"],
    ["Number", 'Number(values["n"])', 8, "number"],
    ["parseFloat", "parseFloat(values.n)", 8, "number"],
    ["unary plus", "const n = +values.n;", 8, "number"],
    ["a default that is not a number", "parseInt(values.n)", null, "integer"],
    ["no conversion", "console.log(values.n)", "8", "string"],
    ["a conversion of something else", "Number(values.other)", "8", "string"],
  ])("a parseArgs string option the code converts: %s", (_, use, value, category) => {
    const def = value === null ? '"eight"' : '"8"';
    const src = `import { parseArgs } from "node:util";\nconst args = parseArgs({ options: { n: { type: "string", default: ${def} } } });\nconst { values } = args;\n${use}\n`;
    expect(paramsOf(src, "mjs")).toEqual([param("n", { value, category })]);
  });
});

describe("node detector: environment variables", () => {
  const cases: [string, string, [string, boolean][]][] = [
    [
      "member and subscript",
      'const a = process.env.A;\nconst b = process.env["B"];',
      [
        ["A", true],
        ["B", true],
      ],
    ],
    [
      "?? and || fallbacks",
      'const a = process.env.A ?? "x";\nconst b = process.env.B || "y";\nconst c = "z" || process.env.C;',
      [
        ["A", false],
        ["B", false],
        ["C", true],
      ],
    ],
    [
      "tests",
      "if (process.env.A) {}\nconst b = process.env.B ? 1 : 2;\nconst c = !process.env.C;\nconst d = typeof process.env.D;\nif (process.env.E === undefined) {}\nconst f = process.env.F === 'prod';",
      [
        ["A", false],
        ["B", false],
        ["C", false],
        ["D", false],
        ["E", false],
        ["F", false],
      ],
    ],
    [
      "a test that throws or exits is a guard",
      'if (!process.env.A) throw new Error("A");\nif (!process.env.B) { console.error("B"); process.exit(1); }\nif (!process.env.C) { console.warn("C"); }',
      [
        ["A", true],
        ["B", true],
        ["C", false],
      ],
    ],
    [
      "conversions keep the fallback visible",
      "const p = Number(process.env.PORT) || 3000;\nconst q = parseInt(process.env.Q ?? '1', 10);\nconst r = Number(process.env.R);",
      [
        ["PORT", false],
        ["Q", false],
        ["R", true],
      ],
    ],
    [
      "stored then tested",
      'const token = process.env.TOKEN;\nif (!token) { console.warn("none"); }\nconst key = process.env.KEY;\nif (!key) throw new Error("KEY");\nconst port = process.env.PORT;\nlisten(port || 80);',
      [
        ["TOKEN", false],
        ["KEY", true],
        ["PORT", false],
      ],
    ],
    [
      "destructuring",
      'const { A = "d", B, C: c, D: d = 1 } = process.env;',
      [
        ["A", false],
        ["B", true],
        ["C", true],
        ["D", false],
      ],
    ],
    ["destructured then tested", 'const { A } = process.env;\nif (!A) console.log("no A");', [["A", false]]],
    [
      "in",
      'if ("A" in process.env) {}\nif (!("B" in process.env)) throw new Error();',
      [
        ["A", false],
        ["B", true],
      ],
    ],
    [
      "writes, deletes, method calls and dynamic names are not reads",
      'process.env.A = "1";\ndelete process.env.B;\nprocess.env.hasOwnProperty("C");\nconst n = "D";\nconst d = process.env[n];\nconst e = process.env[`E${n}`];',
      [],
    ],
    [
      "import.meta.env",
      'const a = import.meta.env.VITE_A;\nconst b = import.meta.env.VITE_B || "x";',
      [
        ["VITE_A", true],
        ["VITE_B", false],
      ],
    ],
    [
      "optional chains",
      'const a = process.env.A?.split(",") ?? [];\nconst b = process.env.B.split(",") ?? [];\nconst c = process.env.C?.trim();',
      [
        ["A", false],
        ["B", true],
        ["C", true],
      ],
    ],
    [
      "reads that cannot stop the program: a template string, an if's branch, a case, a conditional's branch",
      'const u = `${process.env.ORIGIN}/health`;\nif (cluster.isPrimary) {\n  const n = Number(process.env.WORKERS);\n} else {\n  use(process.env.OTHER.trim());\n}\nswitch (mode) {\n  case "a":\n    go(process.env.CASE_A);\n}\nconst t = fast ? process.env.FAST_URL : "x";\nassert(process.env.MUST);\nfunction f() { if (x) return; return process.env.IN_FN.trim(); }',
      [
        ["ORIGIN", false],
        ["WORKERS", false],
        ["OTHER", false],
        ["CASE_A", false],
        ["FAST_URL", false],
        ["MUST", true],
        ["IN_FN", true],
      ],
    ],
    [
      "TypeScript wrappers",
      'const a = process.env.A!;\nconst b = (process.env.B as string) ?? "d";',
      [
        ["A", true],
        ["B", false],
      ],
    ],
  ];
  it.each(cases)("%s", (_name, source, expected) => {
    const out = detectNode(context({ "src/a.ts": source }));
    expect(out.envVars.map((e) => [e.name, e.required])).toEqual(expected);
  });

  it("keeps the first use and the first required one of each file, and skips tests and unreadable files", () => {
    const out = detectNode(
      context({
        "a.js": 'const x = process.env.X ?? "d";\n',
        "b.mjs": "\n\nconst x = process.env.X;\n",
        "c.cjs": "const y = process.env.Y;\n",
        "d.js": null,
        "e.min.js": "process.env.MIN",
        "src/a.test.js": "process.env.T1",
        "src/b.spec.ts": "process.env.T2",
        "tests/c.js": "process.env.T3",
        "src/__tests__/d.js": "process.env.T4",
        "types.d.ts": "declare const x: typeof process.env.DTS;",
        "broken.tsx": "const a = <div>{process.env.BROKEN}</div>;\nfunction ((( {",
      }),
    );
    expect(out.envVars).toEqual([
      { name: "X", path: "a.js", line: 1, required: false },
      { name: "X", path: "b.mjs", line: 3, required: true },
      { name: "BROKEN", path: "broken.tsx", line: 1, required: true },
      { name: "Y", path: "c.cjs", line: 1, required: true },
    ]);
  });
});

describe("node detector: yargs chains and sub-commands", () => {
  it("reads chained declarations under the option's long name", () => {
    const src = `const yargs = require("yargs/yargs");
const { hideBin } = require("yargs/helpers");
const argv = yargs(hideBin(process.argv))
  .usage("$0 [options]")
  .alias("e", "epochs")
  .number("e")
  .default("e", 10)
  .describe("e", "passes over the data")
  .option("b", { alias: "batch-size", type: "number", default: 32 })
  .boolean(["dry-run", "verbose"])
  .string("model")
  .choices("model", ["small", "large"])
  .default({ model: "small" })
  .require("data")
  .string("data")
  .parse();
`;
    expect(paramsOf(src)).toEqual([
      param("epochs", { value: 10, category: "integer", description: "passes over the data" }),
      param("batch-size", { value: 32, category: "integer" }),
      param("dry-run", { value: false, category: "flag" }),
      param("verbose", { value: false, category: "flag" }),
      param("model", { value: "small", choices: ["small", "large"] }),
      param("data", { required: true }),
    ]);
  });

  it("makes one bin experiment per yargs command, with its builder's options and positionals", () => {
    const src = `import yargs from "yargs";
import { hideBin } from "yargs/helpers";
yargs(hideBin(process.argv))
  .command("train <config>", "Train a model", (y) => y.option("epochs", { type: "number", default: 5 }).positional("config", { type: "string" }), run)
  .command("serve [port]", "Serve it", { host: { type: "string", default: "0.0.0.0" } }, serve)
  .demandCommand(1)
  .parse();
`;
    const out = detectNode(context({ "package.json": pkg({ name: "mlc", bin: "cli.mjs" }), "cli.mjs": src }));
    expect(
      out.experiments.map((e) => [e.id, e.entry_point, e.description, e.parameters.map((p) => [p.name, p.value, p.category, p.cli_option, p.required])]),
    ).toEqual([
      [
        "node-bin:mlc serve",
        "node cli.mjs serve",
        "Serve it",
        [
          ["port", null, "string", null, false],
          ["host", "0.0.0.0", "string", "--host", false],
        ],
      ],
      [
        "node-bin:mlc train",
        "node cli.mjs train",
        "Train a model",
        [
          ["config", null, "string", null, true],
          ["epochs", 5, "integer", "--epochs", false],
        ],
      ],
    ]);
  });

  it("makes one bin experiment per commander sub-command, chained or held in a variable", () => {
    const src = `const { program } = require("commander");
program.name("kb").option("--verbose");
program
  .command("index <dir>")
  .description("Index a folder")
  .option("--batch <n>", "batch size", parseInt, 64)
  .action(index);
const search = program.command("search");
search.argument("<query>").option("-k, --top-k <k>", "results", 5);
program.parse();
`;
    const out = detectNode(context({ "package.json": pkg({ name: "kb", bin: { kb: "bin/kb.js" } }), "bin/kb.js": src }));
    expect(out.experiments.map((e) => [e.id, e.parameters.map((p) => [p.name, p.value, p.category, p.required])])).toEqual([
      [
        "node-bin:kb index",
        [
          ["dir", null, "string", true],
          ["batch", 64, "integer", false],
        ],
      ],
      [
        "node-bin:kb search",
        [
          ["query", null, "string", true],
          ["topK", 5, "integer", false],
        ],
      ],
    ]);
  });
});

describe("node detector: environment validated by a schema", () => {
  const vars = (src: string) =>
    detectNode(context({ "package.json": pkg({ scripts: { start: "node server.js" } }), "src/env.js": src })).envVars.map((u) => [u.name, u.required]);
  it.each<[string, string, [string, boolean][]]>([
    [
      "envalid",
      'const { cleanEnv, str, port, bool } = require("envalid");\nmodule.exports = cleanEnv(process.env, {\n  DATABASE_URL: str(),\n  PORT: port({ default: 3000 }),\n  DEBUG: bool({ devDefault: true }),\n});\n',
      [
        ["DATABASE_URL", true],
        ["DEBUG", false],
        ["PORT", false],
      ],
    ],
    [
      "zod, schema in a const",
      'import { z } from "zod";\nconst Env = z.object({\n  DATABASE_URL: z.string().url(),\n  PORT: z.coerce.number().default(8080),\n  SENTRY_DSN: z.string().optional(),\n});\nexport const env = Env.parse(process.env);\n',
      [
        ["DATABASE_URL", true],
        ["PORT", false],
        ["SENTRY_DSN", false],
      ],
    ],
    [
      "Joi",
      'const Joi = require("joi");\nconst { value } = Joi.object({\n  REDIS_URL: Joi.string().uri().required(),\n  LOG_LEVEL: Joi.string().valid("info", "debug"),\n}).unknown().validate(process.env);\n',
      [
        ["REDIS_URL", true],
        ["LOG_LEVEL", false],
      ],
    ],
    [
      "Joi through a variable and further calls",
      'import Joi from "joi";\nconst schema = Joi.object({\n  SECRET: Joi.string().required(),\n  PORT: Joi.number().default(3000),\n}).unknown();\nconst { value } = schema.prefs({ errors: { label: "key" } }).validate(process.env);\n',
      [
        ["SECRET", true],
        ["PORT", false],
      ],
    ],
    [
      "zod extended through variables, parsed inside a function",
      'import { z } from "zod";\nconst base = z.object({ REDIS_URL: z.string() });\nconst full = base.extend({ QUEUE: z.string().default("q"), SMTP_PASSWORD: z.string() }).strict();\nexport function load() {\n  return full.parse(process.env);\n}\n',
      [
        ["REDIS_URL", true],
        ["QUEUE", false],
        ["SMTP_PASSWORD", true],
      ],
    ],
    [
      "envalid through a namespace and a spec in a const",
      'import * as envalid from "envalid";\nconst spec = { ADMIN_EMAIL: envalid.email(), LIMIT: envalid.num({ default: 5 }) };\nexport const env = envalid.cleanEnv(process.env, spec);\n',
      [
        ["ADMIN_EMAIL", true],
        ["LIMIT", false],
      ],
    ],
  ])("%s", (_name, src, want) => expect(vars(src).sort()).toEqual([...want].sort()));
});
