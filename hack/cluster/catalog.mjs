// The local cluster's default environment catalog: the value of the server's
// CODEPLANE_ENVIRONMENT_IMAGES (Helm `environments.images`), made from the
// same images/*/image.json files hack/cluster/images.sh builds the images
// from, so the images and the catalog that names them have one author. Each
// image.json with a "catalog" entry is one catalog image: its name ("image")
// and what it offers (toolchains, and packages / presets where it has them).
// It refuses to print a catalog that disagrees with what the recipe builds
// (a Python version its Debian suite does not ship, a Go version other than
// the toolchain it installs, ...): test/images runs the same checks.
//
//   node hack/cluster/catalog.mjs            the catalog as one line of JSON
//   node hack/cluster/catalog.mjs --pretty   the same, indented
//   node hack/cluster/catalog.mjs --names    the catalog images' folders, the runner first
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

/** What each Debian suite the recipe builds on ships (python3, gcc of build-essential). */
export const DEBIAN = {
  bookworm: { python: "3.11", c: "12" },
  trixie: { python: "3.13", c: "14" },
};

/** Every catalog image runs as this user (the pods' runAsUser). */
export const USER = "10001:10001";

const TOOLCHAIN = /^[a-z][a-z0-9]*$/;
const VERSION = /^[0-9]+(\.[0-9]+)?$/;
const PEP503 = /^[a-z0-9]+(-[a-z0-9]+)*$/;
const PRESET = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/;
const IMAGE = /^[a-z0-9]+([._-][a-z0-9]+)*(\/[a-z0-9]+([._-][a-z0-9]+)*)*:[A-Za-z0-9_][A-Za-z0-9_.-]*$/;

const names = (value, pattern, what) => {
  if (!Array.isArray(value) || value.length === 0) return [`${what} must be a non-empty array (or left out)`];
  const bad = value.filter((v) => typeof v !== "string" || !pattern.test(v));
  if (bad.length) return [`${what}: ${bad.map((v) => JSON.stringify(v)).join(", ")} not of the form ${pattern}`];
  return new Set(value).size === value.length ? [] : [`${what} has duplicates`];
};

/** What is wrong with a catalog entry's shape (image.json's "catalog"), [] when it is well-formed. */
export function entryProblems(entry) {
  if (typeof entry !== "object" || entry === null || Array.isArray(entry)) return ["catalog must be an object"];
  const problems = Object.keys(entry)
    .filter((k) => !["toolchains", "packages", "presets"].includes(k))
    .map((k) => `catalog has an unknown key ${k}`);
  const tc = entry.toolchains;
  if (typeof tc !== "object" || tc === null || Array.isArray(tc) || Object.keys(tc).length === 0) {
    problems.push("catalog.toolchains must be an object naming at least one toolchain");
  } else {
    for (const [name, version] of Object.entries(tc)) {
      if (!TOOLCHAIN.test(name)) problems.push(`toolchain name ${JSON.stringify(name)} not of the form ${TOOLCHAIN}`);
      if (typeof version !== "string" || !VERSION.test(version))
        problems.push(`toolchain ${name}: version ${JSON.stringify(version)} is not "major" or "major.minor"`);
    }
    // The run's entrypoint (it frames stdout and stderr) is a Node program: every image has node >= 22.
    if (!(Number.parseInt(tc.node, 10) >= 22)) problems.push("toolchains.node must be there, 22 or newer (the run's entrypoint is a Node program)");
  }
  if ("packages" in entry) problems.push(...names(entry.packages, PEP503, "catalog.packages (PEP 503 normalised names)"));
  if ("presets" in entry) problems.push(...names(entry.presets, PRESET, "catalog.presets"));
  return problems;
}

/** The catalog images under <root>/images, the runner first: { name, dir, json, packages, rootfs }. */
export function catalogImages(root) {
  const images = path.join(root, "images");
  return readdirSync(images)
    .filter((name) => existsSync(path.join(images, name, "image.json")))
    .map((name) => {
      const dir = path.join(images, name);
      const json = JSON.parse(readFileSync(path.join(dir, "image.json"), "utf8"));
      const list = path.join(dir, "packages.txt");
      // the runner's own list is every image's; only the others' lists add packages
      const packages = name !== "runner" && existsSync(list) ? readFileSync(list, "utf8").replace(/#.*/g, "").split(/\s+/).filter(Boolean) : [];
      return { name, dir, json, packages, rootfs: existsSync(path.join(dir, "rootfs")) };
    })
    .filter((img) => "catalog" in img.json)
    .sort((a, b) => (a.name === "runner" ? -1 : b.name === "runner" ? 1 : a.name.localeCompare(b.name)));
}

/** A Python distribution the image's files provide: its dist-info in the suite's site-packages. */
function providesPackage(img, pkg, python) {
  const site = path.join(img.dir, "rootfs", "usr", "local", "lib", `python${python}`, "dist-packages");
  if (!existsSync(site)) return false;
  return readdirSync(site).some(
    (f) =>
      f.endsWith(".dist-info") &&
      f
        .split("-")[0]
        .toLowerCase()
        .replace(/[-_.]+/g, "-") === pkg,
  );
}

/** What an image.json says that its recipe does not build (or its catalog entry's shape), [] when they agree. */
export function imageProblems(img) {
  const { json } = img;
  const problems = entryProblems(json.catalog).map((p) => `images/${img.name}: ${p}`);
  const say = (p) => problems.push(`images/${img.name}/image.json: ${p}`);
  if (typeof json.image !== "string" || !IMAGE.test(json.image)) say(`image ${JSON.stringify(json.image)} is no image reference name:tag`);
  else if (json.labels?.["org.opencontainers.image.title"] !== json.image.split(":")[0])
    say(`the label org.opencontainers.image.title must be ${json.image.split(":")[0]}`);
  if (json.user !== USER) say(`user must be ${USER} (runs use that uid), not ${json.user}`);
  const suite = DEBIAN[json.debian];
  if (!suite) return [...problems, `images/${img.name}/image.json: debian ${json.debian} is none of ${Object.keys(DEBIAN).join(", ")}`];
  if (json.base !== `node:${json.node}-${json.debian}-slim`) say(`base must be node:${json.node}-${json.debian}-slim`);
  const tc = json.catalog?.toolchains ?? {};
  if (tc.node !== json.node) say(`catalog.toolchains.node must be ${json.node} (the Node layer every image gets)`);
  if (tc.python !== suite.python) say(`catalog.toolchains.python must be ${suite.python} (python3 of Debian ${json.debian})`);
  const go = json.go ? json.go.split(".").slice(0, 2).join(".") : undefined;
  if (tc.go !== go)
    say(go ? `catalog.toolchains.go must be ${go} (the toolchain go${json.go} it installs)` : "catalog.toolchains.go without a go version to install");
  const c = img.packages.includes("build-essential") ? suite.c : undefined;
  if (tc.c !== c)
    say(c ? `catalog.toolchains.c must be ${c} (gcc of Debian ${json.debian})` : "catalog.toolchains.c without build-essential in its packages.txt");
  for (const pkg of json.catalog?.packages ?? [])
    if (!providesPackage(img, pkg, suite.python)) say(`catalog.packages names ${pkg}, which its rootfs/ does not provide`);
  return problems;
}

/** The catalog (CODEPLANE_ENVIRONMENT_IMAGES) from <root>/images; throws when an image.json disagrees with its recipe. */
export function catalog(root) {
  const images = catalogImages(root);
  const problems = images.flatMap(imageProblems);
  if (problems.length) throw new Error(`the image catalog is inconsistent:\n  ${problems.join("\n  ")}`);
  return images.map(({ json }) => ({ image: json.image, ...json.catalog }));
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
  const arg = process.argv[2];
  try {
    if (arg === "--names")
      process.stdout.write(
        `${catalogImages(root)
          .map((i) => i.name)
          .join("\n")}\n`,
      );
    else if (arg === undefined || arg === "--pretty") process.stdout.write(`${JSON.stringify(catalog(root), null, arg ? 2 : undefined)}\n`);
    else {
      process.stderr.write("usage: catalog.mjs [--pretty|--names]\n");
      process.exit(2);
    }
  } catch (e) {
    process.stderr.write(`catalog.mjs: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(1);
  }
}
