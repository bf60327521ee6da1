import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
// @ts-expect-error: a plain .mjs script (the Dockerfile's build stage runs it with the base image's node), without types
import { APP_ROOTS, appFiles, isTestPath, manifestFiles } from "../../images/codeplane/app-files.mjs";

// One recipe per image, two builds: the Dockerfiles and the Docker-free
// hack/cluster/images.sh both run images/runner/setup.sh over packages.txt,
// and both take /app from images/codeplane/app-files.mjs. What Docker syntax
// cannot read from a file (the image's user, environment, command, labels,
// base) is checked here against the image.json oci-image.py reads.

const root = new URL("../..", import.meta.url).pathname;
const read = (rel: string) => readFileSync(path.join(root, rel), "utf8");

interface ImageJson {
  base: string;
  debian: string;
  node: string;
  user: string;
  workdir: string;
  env: string[];
  entrypoint?: string[];
  cmd?: string[];
  labels: Record<string, string>;
}

/** The final stage's config as Docker would set it (continuation lines joined; the instructions these Dockerfiles use). */
function dockerfileConfig(text: string) {
  const lines = text
    .replace(/\\\n\s*/g, " ")
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith("#"));
  const stages = lines.reduce<string[][]>((acc, l) => (l.startsWith("FROM ") ? [...acc, [l]] : (acc.at(-1)!.push(l), acc)), []);
  const last = stages.at(-1)!;
  const args = (word: string) => last.filter((l) => l.startsWith(`${word} `)).map((l) => l.slice(word.length + 1).trim());
  const pairs = (word: string) => args(word).flatMap((a) => a.split(/\s+/));
  const json = (word: string) => (args(word).length ? (JSON.parse(args(word).at(-1)!) as string[]) : undefined);
  return {
    base: args("FROM")[0]!.split(/\s+/)[0],
    user: args("USER").at(-1),
    workdir: args("WORKDIR").at(-1),
    env: pairs("ENV"),
    labels: Object.fromEntries(pairs("LABEL").map((p) => p.split("=", 2) as [string, string])),
    entrypoint: json("ENTRYPOINT"),
    cmd: json("CMD"),
    runs: args("RUN"),
    copies: args("COPY"),
  };
}

describe.each([
  ["codeplane-runner", "images/runner/Dockerfile", "images/runner/image.json", "", "build_runner"],
  ["codeplane", "Dockerfile", "images/codeplane/image.json", "images/runner/", "build_app"],
])("the %s image", (_, dockerfile, imageJson, recipeDir, buildFunction) => {
  const declared = JSON.parse(read(imageJson)) as ImageJson;
  const docker = dockerfileConfig(read(dockerfile));

  it("has the config its image.json declares in its Dockerfile too", () => {
    expect(declared.base).toBe(`node:${declared.node}-${declared.debian}-slim`);
    expect({
      base: docker.base,
      user: docker.user,
      workdir: docker.workdir,
      env: docker.env,
      labels: docker.labels,
      entrypoint: docker.entrypoint,
      cmd: docker.cmd,
    }).toEqual({
      base: declared.base,
      user: declared.user,
      workdir: declared.workdir,
      env: declared.env,
      labels: declared.labels,
      entrypoint: declared.entrypoint,
      cmd: declared.cmd,
    });
  });

  it("gets its system from the one recipe in both builds", () => {
    expect(docker.copies).toContain(`${recipeDir}packages.txt ${recipeDir}setup.sh /tmp/recipe/`);
    expect(docker.runs).toContain("sh /tmp/recipe/setup.sh /tmp/recipe/packages.txt");
    const images = read("hack/cluster/images.sh");
    expect(images).toMatch(/chroot "\$dir" \/bin\/sh \/tmp\/recipe\/setup\.sh \/tmp\/recipe\/packages\.txt/);
    // images.sh reads the image's config from the same image.json.
    const build = images.slice(images.indexOf(`${buildFunction}() {`));
    expect(build.slice(0, build.indexOf("\n}\n"))).toContain(
      `--config "${imageJson.startsWith("images/runner/") ? "$RECIPE/image.json" : `$REPO_ROOT/${imageJson}`}"`,
    );
  });
});

describe("the codeplane image's /app", () => {
  it.each<[string, boolean]>([
    ["src/main.ts", false],
    ["src/k8s/install.ts", false],
    ["src/k8s/install.test.ts", true],
    ["src/controller/testing/fakes.ts", true],
    ["packages/analyzer/src/cli.ts", false],
    ["packages/analyzer/src/cli.test.ts", true],
    ["packages/analyzer/test/fixtures/a.py", true],
    ["packages/runner/node_modules/x/index.js", true],
    ["src/ui/app/page.test.tsx", true],
  ])("%s is a test path: %s", (rel, expected) => {
    expect(isTestPath(rel)).toBe(expected);
  });

  it("holds the manifests, the entrypoint, the CRDs and the sources, and no test or test fake", () => {
    const files = appFiles(root) as string[];
    expect(files).toEqual(expect.arrayContaining(["package.json", "package-lock.json", "bin/codeplane.mjs", "src/main.ts", "crds/codeplane.dev_runs.yaml"]));
    expect(files.filter((f) => isTestPath(f) || /\.test\./.test(f) || f.includes("/testing/"))).toEqual([]);
    expect(files.filter((f) => !APP_ROOTS.includes(f.split("/")[0]!))).toEqual([]);
    expect(manifestFiles(root)).toEqual(expect.arrayContaining(["package.json", "package-lock.json"]));
  });

  it("is built from a Docker context that holds the recipe and leaves tests out", () => {
    const ignore = read(".dockerignore").split("\n");
    for (const kept of ["!images/runner/packages.txt", "!images/runner/setup.sh", "!images/codeplane/app-files.mjs"]) expect(ignore).toContain(kept);
    for (const left of ["test", "**/*.test.ts", "**/testing"]) expect(ignore).toContain(left);
  });
});
