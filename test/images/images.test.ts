import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
// @ts-expect-error: a plain .mjs script (the Dockerfile's build stage runs it with the base image's node), without types
import { APP_ROOTS, appFiles, isTestPath, manifestFiles } from "../../images/codeplane/app-files.mjs";
// @ts-expect-error: a plain .mjs script (run by images.sh with the machine's node), without types
import { catalog, catalogImages, entryProblems, imageProblems } from "../../hack/cluster/catalog.mjs";

// One recipe per image, two builds: the Dockerfiles and the Docker-free
// hack/cluster/images.sh both run images/runner/setup.sh over packages.txt
// (and an image's own packages.txt after it), install the Go image's toolchain
// with images/go/install-toolchain.sh, copy an image's rootfs/, and take /app
// from images/codeplane/app-files.mjs. What Docker syntax
// cannot read from a file (the image's user, environment, command, labels,
// base) is checked here against the image.json oci-image.py reads.

const root = new URL("../..", import.meta.url).pathname;
const read = (rel: string) => readFileSync(path.join(root, rel), "utf8");

interface ImageJson {
  image?: string;
  go?: string;
  catalog?: unknown;
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

interface CatalogImage {
  name: string;
  dir: string;
  json: ImageJson & { image: string; catalog: { toolchains: Record<string, string>; packages?: string[]; presets?: string[] } };
  packages: string[];
  rootfs: boolean;
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

const images = read("hack/cluster/images.sh");
/** The body of a shell function of images.sh. */
const shellFunction = (name: string) => {
  const body = images.slice(images.indexOf(`\n${name}() {`));
  return body.slice(0, body.indexOf("\n}\n"));
};

const dockerConfigOf = (docker: ReturnType<typeof dockerfileConfig>) => ({
  base: docker.base,
  user: docker.user,
  workdir: docker.workdir,
  env: docker.env,
  labels: docker.labels,
  entrypoint: docker.entrypoint,
  cmd: docker.cmd,
});
const declaredConfigOf = (declared: ImageJson) => ({
  base: declared.base,
  user: declared.user,
  workdir: declared.workdir,
  env: declared.env,
  labels: declared.labels,
  entrypoint: declared.entrypoint,
  cmd: declared.cmd,
});

describe("the codeplane image", () => {
  const declared = JSON.parse(read("images/codeplane/image.json")) as ImageJson;
  const docker = dockerfileConfig(read("Dockerfile"));

  it("has the config its image.json declares in its Dockerfile too", () => {
    expect(declared.base).toBe(`node:${declared.node}-${declared.debian}-slim`);
    expect(dockerConfigOf(docker)).toEqual(declaredConfigOf(declared));
  });

  it("gets its system from the one recipe in both builds", () => {
    expect(docker.copies).toContain("images/runner/packages.txt images/runner/setup.sh /tmp/recipe/");
    expect(docker.runs).toContain("sh /tmp/recipe/setup.sh /tmp/recipe/packages.txt");
    // images.sh: the runner's base layer (its suite and packages) and Node layer, the config from the same image.json.
    const build = shellFunction("build_app");
    expect(build).toContain('base_layer "$SUITE"; node_layer');
    expect(build).toContain('--config "$REPO_ROOT/images/codeplane/image.json"');
  });
});

// The catalog images: every images/<name>/image.json with a "catalog" entry
// (hack/cluster/catalog.mjs prints the default catalog from them).
const catalogImageList = catalogImages(root) as CatalogImage[];

describe("the catalog images", () => {
  it("are the runner first and the toolchain images, each named codeplane-<folder>:dev", () => {
    expect(catalogImageList.map((i) => i.name)).toEqual(["runner", "build", "go", "python-next", "torch-standin"]);
    for (const img of catalogImageList) expect(img.json.image).toBe(`codeplane-${img.name}:dev`);
    // lib.sh's name of the runner, which the cluster tests and up.sh use, is the catalog's.
    expect(read("hack/cluster/lib.sh")).toContain(`RUNNER_IMAGE="${catalogImageList[0]!.json.image}"`);
  });

  it("is printed by hack/cluster/catalog.mjs as the CODEPLANE_ENVIRONMENT_IMAGES value", () => {
    const printed = JSON.parse(execFileSync(process.execPath, [path.join(root, "hack/cluster/catalog.mjs")], { encoding: "utf8" })) as unknown;
    expect(printed).toEqual(catalog(root));
    expect(printed).toEqual([
      { image: "codeplane-runner:dev", toolchains: { python: "3.11", node: "24" } },
      { image: "codeplane-build:dev", toolchains: { python: "3.11", node: "24", c: "12", cmake: "3.25" } },
      { image: "codeplane-go:dev", toolchains: { python: "3.11", node: "24", go: "1.27" } },
      { image: "codeplane-python-next:dev", toolchains: { python: "3.13", node: "24" } },
      { image: "codeplane-torch-standin:dev", toolchains: { python: "3.11", node: "24" }, packages: ["torch"], presets: ["gpu-standin"] },
    ]);
  });

  it("are all built by images.sh from its image.json: the recipe's base layer, the one Node layer, then Go and rootfs/", () => {
    const build = shellFunction("build_image");
    expect(build).toContain('base_layer "$suite" "$more"; node_layer');
    expect(build).toContain('layers=(--layer "$BASE_TAR" --layer "$NODE_TAR")');
    expect(build).toContain('if [ -n "$go" ]; then go_layer "$go"; layers+=(--layer "$GO_TAR"); fi');
    expect(build).toContain('if [ -d "$IMAGES/$name/rootfs" ]; then files_layer "$name"; layers+=(--layer "$FILES_TAR"); fi');
    expect(build).toContain('--config "$json"');
    expect(build).toContain('more="$IMAGES/$name/packages.txt"');
    // the system: setup.sh over the runner's list, then the image's own
    const base = shellFunction("base_layer");
    expect(base).toContain("local lists=(/tmp/recipe/packages.txt)");
    expect(base).toContain('cp "$more" "$dir/tmp/recipe/more-packages.txt"; lists+=(/tmp/recipe/more-packages.txt)');
    expect(base).toMatch(/chroot "\$dir" \/bin\/sh \/tmp\/recipe\/setup\.sh "\$\{lists\[@\]\}"/);
    expect(shellFunction("go_layer")).toContain('sh "$IMAGES/go/install-toolchain.sh" "$goroot" "$dir/root/usr/local/go"');
    // `make images` (images.sh all) builds every catalog image
    expect(images).toMatch(/\n {2}all\) build_pause; build_coredns; build_catalog; build_app ;;\n/);
  });

  it.each<[string, Record<string, unknown>, string[]]>([
    ["the runner's", { toolchains: { python: "3.11", node: "24" } }, []],
    ["a stand-in's", { toolchains: { node: "24" }, packages: ["torch"], presets: ["gpu-standin"] }, []],
    ["no node", { toolchains: { python: "3.11" } }, ["toolchains.node must be there, 22 or newer (the run's entrypoint is a Node program)"]],
    ["an old node", { toolchains: { node: "20" } }, ["toolchains.node must be there, 22 or newer (the run's entrypoint is a Node program)"]],
    ["a patch version", { toolchains: { node: "24", go: "1.27.3" } }, ['toolchain go: version "1.27.3" is not "major" or "major.minor"']],
    ["a capital toolchain", { toolchains: { node: "24", Go: "1.27" } }, ['toolchain name "Go" not of the form /^[a-z][a-z0-9]*$/']],
    ["no toolchains", { packages: ["torch"] }, ["catalog.toolchains must be an object naming at least one toolchain"]],
    [
      "an unnormalised package",
      { toolchains: { node: "24" }, packages: ["Torch_Vision"] },
      ['catalog.packages (PEP 503 normalised names): "Torch_Vision" not of the form /^[a-z0-9]+(-[a-z0-9]+)*$/'],
    ],
    ["an empty preset list", { toolchains: { node: "24" }, presets: [] }, ["catalog.presets must be a non-empty array (or left out)"]],
    ["a repeated preset", { toolchains: { node: "24" }, presets: ["gpu", "gpu"] }, ["catalog.presets has duplicates"]],
    ["an unknown key", { toolchains: { node: "24" }, image: "x:dev" }, ["catalog has an unknown key image"]],
  ])("a catalog entry with %s: %j", (_, entry, problems) => {
    expect(entryProblems(entry)).toEqual(problems);
  });

  it.each<[string, string, (img: CatalogImage) => void, string]>([
    ["another user", "runner", (img) => (img.json.user = "0:0"), "user must be 10001:10001 (runs use that uid), not 0:0"],
    [
      "a Python its suite lacks",
      "runner",
      (img) => Object.assign(img.json, { debian: "trixie", base: "node:24-trixie-slim" }),
      "catalog.toolchains.python must be 3.13 (python3 of Debian trixie)",
    ],
    ["another Go", "go", (img) => (img.json.go = "1.26.8"), "catalog.toolchains.go must be 1.26 (the toolchain go1.26.8 it installs)"],
    ["no build-essential", "build", (img) => (img.packages = ["pkg-config"]), "catalog.toolchains.c without build-essential in its packages.txt"],
    ["a package no file provides", "go", (img) => (img.json.catalog.packages = ["torch"]), "catalog.packages names torch, which its rootfs/ does not provide"],
    [
      "a title that is not its name",
      "go",
      (img) => (img.json.labels["org.opencontainers.image.title"] = "go"),
      "the label org.opencontainers.image.title must be codeplane-go",
    ],
  ])("an image.json with %s does not pass (images/%s)", (_, name, change, problem) => {
    const img = structuredClone(catalogImageList.find((i) => i.name === name)!);
    change(img);
    expect(imageProblems(img)).toEqual([`images/${name}/image.json: ${problem}`]);
  });
});

describe.each(catalogImageList.map((img) => [img.json.image, img] as const))("the %s image", (_, img) => {
  const dockerfile = img.name === "runner" ? "images/runner/Dockerfile" : `images/${img.name}/Dockerfile`;
  const docker = dockerfileConfig(read(dockerfile));
  const declared = img.json;

  it("agrees with its recipe: uid 10001, node, its suite's Python, its Go and C, the packages its files provide", () => {
    expect(imageProblems(img)).toEqual([]);
    expect(declared.user).toBe("10001:10001");
    expect(declared.catalog.toolchains.node).toBe(declared.node);
  });

  it("has the config its image.json declares in its Dockerfile too", () => {
    expect(dockerConfigOf(docker)).toEqual(declaredConfigOf(declared));
  });

  it("gets its system from the one recipe in both builds, its Node from the Node image", () => {
    // the runner's Dockerfile builds from images/runner/, the others from images/ (they read the runner's recipe)
    const recipeDir = img.name === "runner" ? "" : "runner/";
    expect(docker.copies).toContain(`${recipeDir}packages.txt ${recipeDir}setup.sh /tmp/recipe/`);
    if (img.packages.length) {
      expect(docker.copies).toContain(`${img.name}/packages.txt /tmp/recipe/more-packages.txt`);
      expect(docker.runs).toContain("sh /tmp/recipe/setup.sh /tmp/recipe/packages.txt /tmp/recipe/more-packages.txt");
    } else {
      expect(docker.runs).toContain("sh /tmp/recipe/setup.sh /tmp/recipe/packages.txt");
    }
    if (img.rootfs) expect(docker.copies).toContain(`${img.name}/rootfs/ /`);
    else expect(docker.copies.filter((c) => c.includes("rootfs"))).toEqual([]);
  });
});

describe("the codeplane-go:dev image", () => {
  const declared = catalogImageList.find((i) => i.name === "go")!.json;
  const text = read("images/go/Dockerfile");

  it("installs the Go toolchain its image.json names in both builds", () => {
    expect(declared.go).toMatch(/^1\.[0-9]+\.[0-9]+$/);
    expect(text).toContain(`ARG GO_VERSION=${declared.go}\n`);
    expect(text).toContain('RUN sh /tmp/install-toolchain.sh "$(GOTOOLCHAIN=go$GO_VERSION go env GOROOT)" /toolchain');
    expect(dockerfileConfig(text).copies).toContain("--from=go /toolchain /usr/local/go");
    expect(declared.env).toContain("PATH=/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
    expect(declared.env).toContain("GOTOOLCHAIN=local");
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
