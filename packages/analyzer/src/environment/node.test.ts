import { describe, expect, it } from "vitest";
import { memoryContext } from "../testing/memory-context.ts";
import { packageManagerField, pnpmMajorForLock, resolveNode, yarnMajorForLock } from "./node.ts";
import { pnpmWorkspaces } from "./node-workspaces.ts";

const resolve = (files: Record<string, string | null>) => resolveNode({ ctx: memoryContext(files), experiments: [] });
const deps = (extra: object = {}) => JSON.stringify({ dependencies: { commander: "^12" }, ...extra });

describe("which lockfile, which manager", () => {
  it.each([
    [{ "package.json": deps(), "package-lock.json": "{}" }, /^npm ci --ignore-scripts/],
    [{ "package.json": deps(), "pnpm-lock.yaml": "lockfileVersion: '6.0'\n" }, /npx --yes pnpm@8 install --frozen-lockfile/],
    [{ "package.json": deps({ packageManager: "pnpm@9.1.0+sha512.x" }), "pnpm-lock.yaml": "lockfileVersion: '6.0'\n" }, /pnpm@9 install/],
    [{ "package.json": deps(), "yarn.lock": "# yarn lockfile v1\n" }, /^npx --yes yarn@1 install --frozen-lockfile/],
    [
      { "package.json": deps(), "yarn.lock": '__metadata:\n  version: 8\n  cacheKey: 10c0\n\n"commander@npm:^12":\n' },
      /@yarnpkg\/cli-dist@4 -- yarn install --immutable$/,
    ],
    [{ "package.json": deps(), "package-lock.json": "{}", "pnpm-lock.yaml": "lockfileVersion: '9.0'\n" }, /^npm ci/],
    [{ "package.json": deps({ packageManager: "pnpm@9.0.0" }), "package-lock.json": "{}", "pnpm-lock.yaml": "lockfileVersion: '9.0'\n" }, /pnpm@9/],
    [{ "package.json": deps() }, /^npm install --ignore-scripts/],
  ])("%j", (files, run) => {
    const part = resolve(files);
    expect(part.steps).toHaveLength(1);
    expect(part.steps[0]!.run).toMatch(run);
  });

  it("says which lockfile it left out, and that an unlocked install may differ", () => {
    expect(resolve({ "package.json": deps(), "package-lock.json": "{}", "yarn.lock": "" }).notes).toEqual([
      "yarn.lock is not used: package-lock.json was chosen",
    ]);
    expect(resolve({ "package.json": deps() }).notes[0]).toMatch(/^no lockfile/);
  });

  it("a package.json without dependencies installs nothing; a broken one is a note", () => {
    expect(resolve({ "package.json": '{"scripts":{"start":"node a.js"}}' })).toMatchObject({ steps: [], toolchains: [{ name: "node" }] });
    expect(resolve({ "package.json": "{" }).notes).toEqual(["package.json could not be read or parsed: nothing is installed for Node"]);
  });

  it("keeps every workspace package's node_modules", () => {
    const part = resolve({
      "package.json": JSON.stringify({ workspaces: ["packages/*", "!packages/legacy"] }),
      "package-lock.json": "{}",
      "packages/a/package.json": "{}",
      "packages/legacy/package.json": "{}",
      "packages/b/nested/package.json": "{}",
      "tools/package.json": "{}",
    });
    expect(part.cache_paths).toEqual(["node_modules", "packages/a/node_modules"]);
  });
});

describe("manager versions", () => {
  it.each([
    ["pnpm@9.12.0", { name: "pnpm", major: "9" }],
    ["yarn@4.1.1+sha224.x", { name: "yarn", major: "4" }],
    ["deno@1", null],
  ])("packageManagerField(%s)", (pm, want) => expect(packageManagerField({ packageManager: pm })).toEqual(want));
  it.each([
    ["lockfileVersion: '9.0'", "9"],
    ["lockfileVersion: 5.4", "7"],
    ["lockfileVersion: '6.1'", "8"],
    ["", "9"],
  ])("pnpmMajorForLock(%s)", (text, want) => expect(pnpmMajorForLock(text)).toBe(want));
  it.each([
    ["# yarn lockfile v1\n", "1"],
    ["__metadata:\n  version: 6\n", "3"],
    ["__metadata:\n  version: 4\n", "2"],
  ])("yarnMajorForLock(%j)", (text, want) => expect(yarnMajorForLock(text)).toBe(want));
  it("reads pnpm-workspace.yaml's list", () => {
    expect(pnpmWorkspaces("packages:\n  - 'apps/*'\n  - \"libs/**\" # all\n  - '!**/test/**'\ncatalog:\n  react: ^18\n")).toEqual([
      "apps/*",
      "libs/**",
      "!**/test/**",
    ]);
  });
});
