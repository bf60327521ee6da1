import { describe, expect, it } from "vitest";
import type { Experiment, ExperimentKind } from "./model.ts";
import { experimentName, rankExperiments, readmeMention } from "./rank.ts";

const exp = (id: string, kind: ExperimentKind): Experiment => ({
  id,
  kind,
  title: id,
  description: null,
  entry_point: id,
  command: [id],
  language: "x",
  path: "x",
  inputs: [],
  outputs: [],
  parameters: [],
});

describe("experimentName", () => {
  it.each<[string, ExperimentKind, string]>([
    ["python:scripts/train.py", "python-script", "train"],
    ["python:cli.py fit", "python-script", "fit"],
    ["python-module:pkg.tool serve", "python-module", "serve"],
    ["npm:test:unit", "npm-script", "test:unit"],
    ["make:train", "make-target", "train"],
    ["go:./cmd/server", "go-main", "server"],
  ])("%s", (id, kind, name) => expect(experimentName(exp(id, kind))).toBe(name));
});

describe("rankExperiments", () => {
  const script = (path: string): Experiment => ({
    ...exp(`python:${path}`, "python-script"),
    path,
    entry_point: `python3 ${path}`,
    command: ["python3", path],
    title: path,
  });
  it("prefers the examples the README points at over alphabetical order", () => {
    const examples = ["examples/audio/main.py", "examples/mnist/main.py", "examples/vision/main.py", "examples/gan/main.py"].map(script);
    const readme = "Start with `python examples/vision/main.py`, then try examples/mnist/main.py.";
    expect(rankExperiments(examples, readme)).toEqual(["python:examples/vision/main.py", "python:examples/mnist/main.py", "python:examples/audio/main.py"]);
  });

  it("takes yarn, pnpm and bun for npm, whole words only, and ignores install and generator lines", () => {
    const npm = (name: string): Experiment => ({
      ...exp(`npm:${name}`, "npm-script"),
      title: name,
      entry_point: `npm run ${name} --`,
      command: ["npm", "run", name, "--"],
    });
    expect(readmeMention(npm("dev"), "Run `yarn dev`.")).toBe(5);
    expect(readmeMention(npm("dev"), "Run `pnpm run dev`.")).toBe(5);
    expect(readmeMention(npm("start"), "`npm start`")).toBe(1);
    expect(readmeMention(npm("dev"), "`yarn dev:server`")).toBe(-1);
    expect(readmeMention(npm("start"), "npx create-start-app my-app\nnpm install start\n")).toBe(-1);
    const app = ["start", "dev", "build"].map(npm);
    expect(rankExperiments(app, "npx create-vite@latest my-app\nyarn install\n\nyarn dev\n")[0]).toBe("npm:dev");
  });

  it("reads a link to a folder as a mention of its main script, first link first", () => {
    const examples = ["dcgan/main.py", "mnist/main.py", "vae/main.py"].map(script);
    const readme = "| [VAE](./vae/) | x |\n| [GAN](https://github.com/o/r/tree/main/dcgan) | y |\n";
    expect(rankExperiments(examples, readme)).toEqual(["python:vae/main.py", "python:dcgan/main.py", "python:mnist/main.py"]);
    expect(readmeMention(script("vae/helpers.py"), "[VAE](vae/)")).toBe(-1);
  });

  it("puts the repository's own package before examples, binder notebooks and docs, whatever their names", () => {
    const module: Experiment = {
      ...exp("python-module:tinyfit", "python-module"),
      path: "tinyfit/__main__.py",
      entry_point: "python3 -m tinyfit",
      command: ["python3", "-m", "tinyfit"],
    };
    const notebook: Experiment = { ...exp("notebook:binder/train_demo.ipynb", "notebook"), path: "binder/train_demo.ipynb" };
    expect(rankExperiments([script("examples/train_demo.py"), notebook, script("docs/run_example.py"), module], "")[0]).toBe("python-module:tinyfit");
  });

  it("finds a sub-command shown with python instead of python3", () => {
    const sub: Experiment = {
      ...exp("python-module:lexi search", "python-module"),
      path: "lexi/__main__.py",
      entry_point: "python3 -m lexi search",
      command: ["python3", "-m", "lexi", "search"],
    };
    expect(readmeMention(sub, "Run `python -m lexi search foo`.")).toBe(5);
  });
});
