import type { Toolchain } from "../model.ts";
import { emptyPart, firstLine, has, type EnvironmentInput, type EnvironmentPart } from "./part.ts";

// Languages the environment does not install for (Rust, Java, Ruby, R, PHP):
// each yields its toolchain and no steps, so the service can refuse a run
// that no catalog image provides for, up front, naming what is missing.

interface Other {
  name: string;
  manifests: string[];
  /** A file naming the version, and whether it is exact. */
  versionFiles?: [path: string, exact: boolean][];
}

const OTHERS: Other[] = [
  { name: "rust", manifests: ["Cargo.toml", "Cargo.lock"], versionFiles: [["rust-toolchain", true]] },
  {
    name: "java",
    manifests: ["pom.xml", "build.gradle", "build.gradle.kts", "settings.gradle", "settings.gradle.kts"],
    versionFiles: [[".java-version", true]],
  },
  { name: "ruby", manifests: ["Gemfile", "Gemfile.lock"], versionFiles: [[".ruby-version", true]] },
  { name: "r", manifests: ["DESCRIPTION", "renv.lock"] },
  { name: "php", manifests: ["composer.json", "composer.lock"] },
];

export function resolveOthers(input: EnvironmentInput): EnvironmentPart {
  const part = emptyPart();
  for (const other of OTHERS) {
    const present = other.manifests.filter((m) => has(input.ctx, m));
    if (!present.length) continue;
    part.toolchains.push(toolchain(input, other, present));
    part.manifests.push(...present);
    part.notes.push(`${present[0]}: ${other.name} dependencies are not installed; the image must provide the ${other.name} toolchain`);
  }
  return part;
}

function toolchain(input: EnvironmentInput, other: Other, present: string[]): Toolchain {
  for (const [path, exact] of other.versionFiles ?? []) {
    const line = firstLine(input.ctx, path);
    const version = line ? /^(?:v|ruby-)?(\d+(?:\.\d+)?)/.exec(line)?.[1] : undefined;
    if (version) return { name: other.name, version, exact, source: `${path} ${line}` };
  }
  if (other.name === "rust") {
    const rust = rustVersion(input);
    if (rust) return rust;
  }
  return { name: other.name, version: null, exact: false, source: present[0]! };
}

/** rust-toolchain.toml's channel (exact when it is a version) or Cargo.toml's rust-version (a floor). */
function rustVersion(input: EnvironmentInput): Toolchain | null {
  const channel = has(input.ctx, "rust-toolchain.toml")
    ? /^\s*channel\s*=\s*"(\d+\.\d+)/m.exec(input.ctx.readText("rust-toolchain.toml") ?? "")?.[1]
    : undefined;
  if (channel) return { name: "rust", version: channel, exact: true, source: `rust-toolchain.toml channel ${channel}` };
  const floor = /^\s*rust-version\s*=\s*"(\d+\.\d+)/m.exec(input.ctx.readText("Cargo.toml") ?? "")?.[1];
  return floor ? { name: "rust", version: floor, exact: false, source: `Cargo.toml rust-version ${floor}` } : null;
}
