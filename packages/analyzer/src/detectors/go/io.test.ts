import { beforeAll, describe, expect, it } from "vitest";
import { Syntax } from "../../syntax.ts";
import { goFiles } from "./io.ts";
import { goImports } from "./literals.ts";

let syntax: Syntax;
beforeAll(async () => {
  syntax = await Syntax.load();
});

const files = (body: string, imports = `"os"`) => {
  const src = `package main\n\nimport (\n${imports.split(" ").join("\n")}\n)\n\n${body}\n`;
  return syntax.parse("go", src, (root) => goFiles(root, goImports(root)))?.value;
};

describe("goFiles", () => {
  it.each<[string, string, string, { inputs: string[]; outputs: string[] }]>([
    [
      "literals",
      `func main() { f, _ := os.Open("data/in.csv"); os.WriteFile("out/sum.txt", nil, 0o644) }`,
      `"os"`,
      { inputs: ["data/in.csv"], outputs: ["out/sum.txt"] },
    ],
    [
      "a flag's default through *name",
      `func main() { in := flag.String("in", "events.jsonl", "input"); out := flag.String("out", "report.json", "output"); flag.Parse(); os.ReadFile(*in); os.Create(*out) }`,
      `"flag" "os"`,
      { inputs: ["events.jsonl"], outputs: ["report.json"] },
    ],
    [
      "flag.StringVar and filepath.Join",
      `var dir string\nfunc main() { flag.StringVar(&dir, "dir", "build", "where"); flag.Parse(); os.MkdirAll(dir, 0o755); os.Create(filepath.Join(dir, "index.html")) }`,
      `"flag" "os" "path/filepath"`,
      { inputs: [], outputs: ["build", "build/index.html"] },
    ],
    [
      "OpenFile by its flags, constants",
      `const logPath = "app.log"\nfunc main() { os.OpenFile(logPath, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); os.OpenFile("seed.db", os.O_RDONLY, 0) }`,
      `"os"`,
      { inputs: ["seed.db"], outputs: ["app.log"] },
    ],
    [
      "io/ioutil",
      `func main() { b, _ := ioutil.ReadFile("config.yaml"); ioutil.WriteFile("config.out.yaml", b, 0o600) }`,
      `"io/ioutil"`,
      { inputs: ["config.yaml"], outputs: ["config.out.yaml"] },
    ],
    [
      "names it cannot tell",
      `func main() { os.Open(os.Args[1]); os.Create(fmt.Sprintf("out-%d.txt", 1)); os.Open("-"); name := "a.txt"; name = "b.txt"; os.Open(name) }`,
      `"fmt" "os"`,
      { inputs: [], outputs: [] },
    ],
    ["another package's Open", `func main() { zip.Open("x.zip") }`, `"archive/zip"`, { inputs: [], outputs: [] }],
  ])("%s", (_, body, imports, want) => expect(files(body, imports)).toEqual(want));
});

describe("goFiles: templates", () => {
  it("reads the files a template parses", () => {
    const body = `const page = "templates/page.tmpl"\nfunc main() { t := template.Must(template.ParseFiles(page, "templates/base.tmpl")); _ = t; template.ParseGlob("templates/*.tmpl") }`;
    expect(files(body, `"html/template"`)).toEqual({ inputs: ["templates/base.tmpl", "templates/page.tmpl"], outputs: [] });
  });
});
