import { describe, expect, it } from "vitest";
import type { Experiment } from "../../model.ts";
import { launched, launchOf, readmeFolderRuns, type RepoView } from "./launch.ts";

const repo = (files: string[], over: Partial<RepoView> = {}): RepoView => {
  const folders = new Set(
    files.flatMap((f) =>
      f
        .split("/")
        .slice(0, -1)
        .map((_, i, parts) => parts.slice(0, i + 1).join("/")),
    ),
  );
  return { hasFile: (p) => files.includes(p), hasFolder: (p) => folders.has(p), installsProject: false, readmeFolderRuns: new Set(), ...over };
};
const none = { relativeImport: false, importedRoots: [] };
const noFiles = { inputs: [], outputs: [] };

describe("launchOf", () => {
  const files = ["pkg/__init__.py", "tools/x.py", "tools/raw/a.csv", "data/b.json", "lib/util.py", "tools/lib/util.py", "my-tools/x.py"];
  it.each<[string, string, Parameters<typeof launchOf>[1], Parameters<typeof launchOf>[2], Partial<RepoView>, string | null]>([
    ["a root script", "x.py", { relativeImport: true, importedRoots: ["pkg"] }, noFiles, {}, null],
    ["a relative import", "tools/x.py", { relativeImport: true, importedRoots: [] }, noFiles, {}, "module tools.x"],
    ["the repository's own package", "tools/x.py", { relativeImport: false, importedRoots: ["os", "pkg"] }, noFiles, {}, "module tools.x"],
    ["... unless pip installs the project", "tools/x.py", { relativeImport: false, importedRoots: ["pkg"] }, noFiles, { installsProject: true }, null],
    ["a module beside the script shadows the root's", "tools/x.py", { relativeImport: false, importedRoots: ["lib"] }, noFiles, {}, null],
    ["a folder that is no module name", "my-tools/x.py", { relativeImport: true, importedRoots: [] }, noFiles, {}, null],
    ["a file beside it by a relative path", "tools/x.py", none, { inputs: ["raw/a.csv"], outputs: [] }, {}, "folder tools"],
    ["a new file in a folder beside it", "tools/x.py", none, { inputs: [], outputs: ["raw/out.csv"] }, {}, "folder tools"],
    ["going up", "tools/x.py", none, { inputs: ["../data/b.json"], outputs: [] }, {}, "folder tools"],
    ["a path that exists from the root", "tools/x.py", none, { inputs: ["data/b.json"], outputs: [] }, {}, null],
    ["a new file alone says nothing", "tools/x.py", none, { inputs: [], outputs: ["out.csv"] }, {}, null],
    ["absolute paths and templates", "tools/x.py", none, { inputs: ["/etc/raw/a.csv", "{x}/a.csv"], outputs: [] }, {}, null],
    ["a README runs it from its folder", "tools/x.py", none, noFiles, { readmeFolderRuns: new Set(["tools/x.py"]) }, "folder tools"],
  ])("%s", (_, path, facts, io, over, want) => {
    const l = launchOf(path, facts, io, repo(files, over));
    expect(l ? `${l.how} ${l.how === "module" ? l.module : l.dir}` : null).toBe(want);
  });
});

describe("readmeFolderRuns", () => {
  const files = new Set(["series/make.py", "series/check.py", "other/run.py", "root.py"]);
  it.each<[string, { dir: string; text: string }[], string[]]>([
    ["a folder's README runs a script by its name", [{ dir: "series/", text: "```\npython make.py\n```" }], ["series/make.py"]],
    ["cd then python, one line", [{ dir: "", text: "cd series && python3 make.py --fast" }], ["series/make.py"]],
    [
      "cd then python, later lines of the block",
      [{ dir: "", text: "```sh\n$ cd series\n$ python make.py\npython check.py\n```" }],
      ["series/check.py", "series/make.py"],
    ],
    ["a folder's README that cds from the root", [{ dir: "series/", text: "cd series\npython make.py" }], ["series/make.py"]],
    ["the block's end forgets the cd", [{ dir: "", text: "```\ncd series\n```\n```\npython root.py\n```" }], []],
    ["a path from the root is not from a folder", [{ dir: "", text: "python series/make.py" }], []],
    ["a script not there", [{ dir: "other/", text: "python make.py" }], []],
  ])("%s", (_, docs, want) => expect([...readmeFolderRuns(docs, (p) => files.has(p))].sort()).toEqual(want));
});

describe("launched", () => {
  const e = { command: ["python3", "series/make.py", "fit"], path: "series/make.py", inputs: ["raw/a.csv"], outputs: ["../out/w.npy"] } as Experiment;
  it("runs a module from the root", () => {
    expect(launched(e, { how: "module", module: "series.make" })).toMatchObject({
      command: ["python3", "-m", "series.make", "fit"],
      entry_point: "python3 -m series.make fit",
    });
  });
  it("runs from the folder, hands the run's arguments on, and names files from the root", () => {
    expect(launched(e, { how: "folder", dir: "series" })).toMatchObject({
      command: ["sh", "-c", 'cd series && exec python3 make.py fit "$@"', "sh"],
      entry_point: "cd series && python3 make.py fit",
      inputs: ["series/raw/a.csv"],
      outputs: ["out/w.npy"],
    });
  });
  it("leaves launchers alone", () => {
    const t = { ...e, command: ["torchrun", "--nproc_per_node=2", "series/make.py"] };
    expect(launched(t, { how: "folder", dir: "series" })).toBe(t);
  });
});
