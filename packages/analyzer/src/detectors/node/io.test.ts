import { beforeAll, describe, expect, it } from "vitest";
import { Syntax } from "../../syntax.ts";
import { memoryContext } from "../../testing/memory-context.ts";
import { detectNode } from "./detector.ts";

let syntax: Syntax;
beforeAll(async () => {
  syntax = await Syntax.load();
});

/** The inputs and outputs of the `start` script, which runs tools/build.js. */
function filesOf(source: string): { inputs: string[]; outputs: string[] } {
  const out = detectNode(
    memoryContext(
      { "package.json": JSON.stringify({ scripts: { start: "node tools/build.js" } }), "tools/build.js": source },
      { syntax, outOfTime: () => false },
    ),
  );
  const e = out.experiments.find((x) => x.id === "npm:start")!;
  return { inputs: e.inputs, outputs: e.outputs };
}

describe("a Node entry's files", () => {
  it.each<[string, string, { inputs: string[]; outputs: string[] }]>([
    ["literals", `fs.readFileSync("data/in.json"); fs.writeFileSync("out.txt", s);`, { inputs: ["data/in.json"], outputs: ["out.txt"] }],
    [
      "an environment variable's fallback through a constant",
      `const OUT = process.env.OUT_FILE || "dist/index.html";\nfs.writeFileSync(OUT, html);`,
      { inputs: [], outputs: ["dist/index.html"] },
    ],
    [
      "path.join from the file's own folder",
      `const fs = require("fs");\nconst path = require("path");\nfs.readFileSync(path.join(__dirname, "templates", "page.html"), "utf8");`,
      { inputs: ["tools/templates/page.html"], outputs: [] },
    ],
    ["path.resolve of literals", `fs.createWriteStream(path.resolve("logs", "build.log"));`, { inputs: [], outputs: ["logs/build.log"] }],
    ["a path leaving the repository", `fs.readFileSync(path.join(__dirname, "..", "..", "etc.json"));`, { inputs: [], outputs: [] }],
    [
      "names it cannot tell",
      `fs.readFileSync(process.argv[2]); fs.writeFileSync(\`\${dir}/x\`, s); let f = "a"; f = "b"; fs.readFileSync(f);`,
      { inputs: [], outputs: [] },
    ],
  ])("%s", (_, source, want) => expect(filesOf(source)).toEqual(want));
});
