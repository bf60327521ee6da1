import type { EnvironmentStep } from "../model.ts";
import { nodeVersion } from "./node-version.ts";
import { packageJsonWorkspaces, pnpmWorkspaces, workspaceFolders } from "./node-workspaces.ts";
import { emptyPart, has, parseJson, type EnvironmentInput, type EnvironmentPart } from "./part.ts";

// Node: the package manager the repository's lockfile (or its
// packageManager field) names, installing exactly what the lockfile pins
// into the checkout's node_modules (kept as cache_paths). Managers other than
// npm come from the npm registry through npx, so the operator's npm mirror
// (NPM_CONFIG_REGISTRY) serves them too; nothing uses corepack's own download
// sites. Install scripts are not run (--ignore-scripts): the install is
// cached and shared, and a package's postinstall is the one place an install
// would run code the lockfile does not pin.

const NODE_KINDS = new Set(["npm-script", "node-bin"]);
type Manager = "npm" | "pnpm" | "yarn";

const step = (name: string, run: string, why: string): EnvironmentStep => ({ name, run, why, ecosystem: "node" });
const NPM_CI = "npm ci --ignore-scripts --no-audit --no-fund";
const NPM_INSTALL = "npm install --ignore-scripts --no-audit --no-fund";

/** "pnpm@9.12.0+sha512.abc" → { name: "pnpm", major: "9" }. */
export function packageManagerField(pkg: Record<string, unknown> | null): { name: string; major: string | null } | null {
  const m = typeof pkg?.packageManager === "string" ? /^(npm|pnpm|yarn|bun)@v?(\d+)?/.exec(pkg.packageManager) : null;
  return m ? { name: m[1]!, major: m[2] ?? null } : null;
}

/** pnpm's lockfileVersion → the pnpm major that writes it (9.0: pnpm 9 and 10; 6.x: pnpm 8; 5.4: pnpm 7). */
export function pnpmMajorForLock(text: string | null): string {
  const v = text ? /^lockfileVersion:\s*['"]?([\d.]+)/m.exec(text)?.[1] : undefined;
  if (!v) return "9";
  const major = Number(v.split(".")[0]);
  if (major >= 9) return "9";
  if (major >= 6) return "8";
  return v === "5.4" ? "7" : "6";
}

/** Yarn Berry's lockfile __metadata version → its Yarn major (8: Yarn 4, 6: Yarn 3, 4 and 5: Yarn 2). */
export function yarnMajorForLock(text: string | null): string | null {
  if (text === null) return null;
  if (/^# yarn lockfile v1/m.test(text) || !text.includes("__metadata:")) return "1";
  const v = /^\s+version:\s*(\d+)/m.exec(text.slice(text.indexOf("__metadata:")))?.[1];
  const n = Number(v ?? 8);
  return n >= 8 ? "4" : n >= 6 ? "3" : "2";
}

const LOCKFILES: [Manager, string][] = [
  ["npm", "package-lock.json"],
  ["npm", "npm-shrinkwrap.json"],
  ["pnpm", "pnpm-lock.yaml"],
  ["yarn", "yarn.lock"],
];

export function resolveNode(input: EnvironmentInput): EnvironmentPart {
  const { ctx } = input;
  const part = emptyPart();
  const hasPkg = has(ctx, "package.json");
  const pkg = hasPkg ? parseJson(ctx.readText("package.json")) : null;
  if (hasPkg && !pkg) part.notes.push("package.json could not be read or parsed: nothing is installed for Node");
  const version = nodeVersion(ctx, pkg);
  if (hasPkg || input.experiments.some((e) => NODE_KINDS.has(e.kind))) {
    part.toolchains.push(
      version ? { name: "node", ...version } : { name: "node", version: null, exact: false, source: hasPkg ? "package.json" : "Node experiments" },
    );
  }
  part.manifests.push(...[".nvmrc", ".node-version"].filter((p) => has(ctx, p)));
  if (!pkg || !(needsInstall(pkg) || has(ctx, "pnpm-workspace.yaml"))) return part;
  install(input, pkg, part);
  return part;
}

function needsInstall(pkg: Record<string, unknown>): boolean {
  const any = (k: string) => Object.keys((pkg[k] as Record<string, unknown> | undefined) ?? {}).length > 0;
  return any("dependencies") || any("devDependencies") || any("optionalDependencies") || packageJsonWorkspaces(pkg).length > 0;
}

function install(input: EnvironmentInput, pkg: Record<string, unknown>, part: EnvironmentPart): void {
  const { ctx } = input;
  const declared = packageManagerField(pkg);
  const present = LOCKFILES.filter(([, file]) => has(ctx, file));
  const chosen = present.find(([m]) => m === declared?.name) ?? present[0];
  for (const [, file] of present)
    if (file !== chosen?.[1]) part.notes.push(`${file} is not used: ${chosen![1]} was chosen${declared ? ` (packageManager ${declared.name})` : ""}`);
  if (has(ctx, "bun.lockb") || has(ctx, "bun.lock")) part.notes.push("bun's lockfile is not used: bun is not provided");
  part.manifests.push("package.json", ...(chosen ? [chosen[1]] : []));
  const folders = workspaceFolders(
    ctx,
    chosen?.[0] === "pnpm" || has(ctx, "pnpm-workspace.yaml") ? pnpmWorkspaces(ctx.readText("pnpm-workspace.yaml")) : packageJsonWorkspaces(pkg),
  );
  if (has(ctx, "pnpm-workspace.yaml")) part.manifests.push("pnpm-workspace.yaml");
  part.manifests.push(...folders.map((d) => `${d}/package.json`));
  part.cache_paths.push("node_modules", ...folders.map((d) => `${d}/node_modules`));
  if (!chosen) {
    part.steps.push(noLockStep(declared?.name === "pnpm" ? declared.major : null));
    part.notes.push("no lockfile: dependency versions are resolved when the environment is built, so two builds may differ");
    return;
  }
  const [manager, file] = chosen;
  if (manager === "npm")
    part.steps.push(
      step("npm ci", NPM_CI, `${file} pins every dependency: npm ci installs exactly those versions and fails if package.json disagrees with it.`),
    );
  else if (manager === "pnpm")
    part.steps.push(pnpmStep(declared?.name === "pnpm" && declared.major ? declared.major : pnpmMajorForLock(ctx.readText(file)), declared?.name === "pnpm"));
  else part.steps.push(yarnStep(declared?.name === "yarn" && declared.major ? declared.major : yarnMajorForLock(ctx.readText(file))));
}

function noLockStep(pnpmMajor: string | null): EnvironmentStep {
  if (pnpmMajor)
    return step(
      "pnpm install",
      `npx --yes pnpm@${pnpmMajor} install --ignore-scripts`,
      `packageManager names pnpm ${pnpmMajor} and there is no lockfile: pnpm resolves the versions.`,
    );
  return step("npm install", NPM_INSTALL, "package.json has dependencies and no lockfile: npm resolves and installs them.");
}

function pnpmStep(major: string, fromField: boolean): EnvironmentStep {
  return step(
    "pnpm install",
    `npm_config_manage_package_manager_versions=false npx --yes pnpm@${major} install --frozen-lockfile --ignore-scripts`,
    `pnpm-lock.yaml pins every dependency: pnpm ${major} (${fromField ? "the major the packageManager field names" : "the major that writes this lockfile version"}) comes from the npm registry through npx and installs exactly the lockfile (--frozen-lockfile). pnpm is kept from fetching another version of itself.`,
  );
}

function yarnStep(major: string | null): EnvironmentStep {
  if (major === "1" || major === null) {
    return step(
      "yarn install",
      "npx --yes yarn@1 install --frozen-lockfile --ignore-scripts --non-interactive",
      "yarn.lock (Yarn 1) pins every dependency: Yarn 1 comes from the npm registry through npx, reads the registry from NPM_CONFIG_REGISTRY and installs exactly the lockfile.",
    );
  }
  return step(
    "yarn install",
    [
      "export YARN_ENABLE_SCRIPTS=false YARN_NODE_LINKER=node-modules YARN_ENABLE_TELEMETRY=0 YARN_ENABLE_GLOBAL_CACHE=false",
      'if [ -n "${NPM_CONFIG_REGISTRY:-}" ]; then export YARN_NPM_REGISTRY_SERVER="$NPM_CONFIG_REGISTRY"; fi',
      `npx --yes --package=@yarnpkg/cli-dist@${major} -- yarn install --immutable`,
    ].join("\n"),
    `yarn.lock (Yarn ${major}) pins every dependency: Yarn ${major} comes from the npm registry (@yarnpkg/cli-dist) through npx rather than corepack's own download site, reads the operator's npm registry, and installs into node_modules (not Plug'n'Play) so the install is kept like any other Node install.`,
  );
}
