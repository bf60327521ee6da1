// Makes a verdaccio storage filled through an uplink servable without one:
// each package's stored metadata keeps only the versions whose tarball is in
// the storage, and `latest` points at the newest of those. Otherwise the
// metadata lists every version the registry had (commander's latest is far
// past 12), and `npm install commander` would ask for a tarball the mirror
// does not hold. Run by hack/cluster/mirror.sh after a fill.
//
//   node freeze-npm.mjs <storage dir> <verdaccio install dir (for semver)>
import { readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";

const [storage, verdaccioDir] = process.argv.slice(2);
if (!storage || !verdaccioDir) throw new Error("usage: freeze-npm.mjs <storage dir> <verdaccio install dir>");
const semver = createRequire(path.join(verdaccioDir, "node_modules", "verdaccio", "package.json"))("semver");

/** Package directories: `name/` and `@scope/name/`, each with a package.json. */
function packageDirs(dir) {
  return readdirSync(dir)
    .filter((e) => !e.startsWith(".") && statSync(path.join(dir, e)).isDirectory())
    .flatMap((e) => (e.startsWith("@") ? readdirSync(path.join(dir, e)).map((n) => path.join(dir, e, n)) : [path.join(dir, e)]));
}

let held = 0;
for (const dir of packageDirs(storage)) {
  const file = path.join(dir, "package.json");
  const meta = JSON.parse(readFileSync(file, "utf8"));
  const files = new Set(readdirSync(dir).filter((f) => f.endsWith(".tgz")));
  const kept = Object.keys(meta.versions).filter((v) => files.has(path.basename(new URL(meta.versions[v].dist.tarball).pathname)));
  if (kept.length === 0) {
    // only looked up (npm's own update check, say), never installed: not served
    rmSync(dir, { recursive: true });
    console.error(`  ${meta.name}: metadata only, dropped`);
    continue;
  }
  meta.versions = Object.fromEntries(kept.map((v) => [v, meta.versions[v]]));
  const tags = Object.entries(meta["dist-tags"] ?? {}).filter(([, v]) => kept.includes(v));
  const stable = kept.filter((v) => !semver.prerelease(v));
  meta["dist-tags"] = { ...Object.fromEntries(tags), latest: semver.rsort([...(stable.length ? stable : kept)])[0] };
  meta._distfiles = Object.fromEntries(Object.entries(meta._distfiles ?? {}).filter(([f]) => files.has(f)));
  meta.time = Object.fromEntries(Object.entries(meta.time ?? {}).filter(([k]) => k === "created" || k === "modified" || kept.includes(k)));
  // no uplink will ever be asked again
  meta._uplinks = {};
  writeFileSync(file, JSON.stringify(meta, null, 2));
  held += kept.length;
  console.error(`  ${meta.name}: ${kept.join(", ")} (latest ${meta["dist-tags"].latest})`);
}
console.error(`npm mirror: ${held} package versions held`);
