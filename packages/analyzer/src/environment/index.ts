import type { Environment, EnvironmentStep, Toolchain } from "../model.ts";
import { resolveC } from "./c.ts";
import { resolveDevcontainer } from "./devcontainer.ts";
import { resolveGo } from "./go.ts";
import { resolveNode } from "./node.ts";
import { resolveNotebook } from "./notebook.ts";
import { resolveOthers } from "./others.ts";
import { notablePackages } from "./packages.ts";
import { resolvePython } from "./python.ts";
import type { EnvironmentInput, EnvironmentPart } from "./part.ts";

// The environment a commit needs, resolved from its files (see
// docs/users/analyses.md, "The environment"): each ecosystem's resolver
// looks at the root's manifests; this merges them, hashes the manifests and
// puts the steps in the order they must run. Deterministic: the same files
// give the same environment, byte for byte.

const RESOLVERS = [resolvePython, resolveNotebook, resolveNode, resolveGo, resolveC, resolveOthers];

/**
 * The venv holds what the repository installs, not a copy of the image's pip: it is made
 * --without-pip, and its bin gets pip, pip3 and pip3.X that run the image's pip with the venv's
 * python (`python -m pip` in a venv installs into it), so `pip install` in a step or a run's command
 * installs into the venv as in any venv. An image whose python has no pip gets pip inside the venv,
 * as every venv did before (`python3 -m venv` again, which adds it with ensurepip). Docs: docs/users/environments.md, decision 0017.
 */
export const VENV_SCRIPT = [
  'venv="$CODEPLANE_ENV_DIR/python"',
  // Made from / (a step is a shell of its own, so the next one still starts in the checkout):
  // python -m imports from the current directory first, and a repository's own typing.py or
  // token.py would run in venv's place.
  'cd / && python3 -m venv --system-site-packages --without-pip "$venv"',
  // The pip scripts run pip with the directory they are started in dropped from sys.path, as pip's
  // own scripts do: `python -m pip` would import a repository's token.py in pip's place when a step
  // or a run calls pip from the checkout.
  `pip_main='import sys; del sys.path[0]; sys.argv[0] = "pip"; from pip._internal.cli.main import main; sys.exit(main())'`,
  `if "$venv/bin/python" -c "$pip_main" --version >/dev/null 2>&1; then`,
  `  for name in pip pip3 "$("$venv/bin/python" -c 'import sys; print("pip%d.%d" % sys.version_info[:2])')"; do`,
  `    printf '#!/bin/sh\\nexec "%s/bin/python" -c '"'"'%s'"'"' "$@"\\n' "$venv" "$pip_main" >"$venv/bin/$name"`,
  '    chmod 755 "$venv/bin/$name"',
  "  done",
  "else",
  '  python3 -m venv --system-site-packages "$venv"',
  "fi",
].join("\n");

export const VENV_STEP: EnvironmentStep = {
  name: "create the Python venv",
  run: VENV_SCRIPT,
  why: "Python packages install into a venv under $CODEPLANE_ENV_DIR (archived and restored at the same path, so its scripts' paths stay valid); --system-site-packages lets packages the image already holds (torch on a GPU image) count as installed. The venv gets no copy of pip: its pip commands run the image's pip with the venv's python, which installs into the venv, so the archive holds only what the repository installed (pip is put in the venv when the image's python has none).",
  ecosystem: "python",
};

const MAX_NOTES = 64;

export function resolveEnvironment(input: EnvironmentInput): Environment {
  const parts = RESOLVERS.map((resolve) => resolve(input));
  const devcontainer = resolveDevcontainer(input.ctx);
  const notes: string[] = [...parts.flatMap((p) => p.notes), ...devcontainer.notes];
  const steps = parts.flatMap((p) => p.steps);
  const python = steps.some((s) => s.ecosystem === "python" || s.ecosystem === "notebook");
  return {
    toolchains: mergeToolchains(parts),
    manifests: hashManifests(input, parts, notes),
    steps: python ? [VENV_STEP, ...steps] : steps,
    cache_paths: [...new Set(parts.flatMap((p) => p.cache_paths))].sort(),
    packages: notablePackages(parts.flatMap((p) => p.packages)),
    notes: [...new Set(notes)].slice(0, MAX_NOTES).map((n) => n.slice(0, 2048)),
    ...(devcontainer.declared && { declared_image: devcontainer.declared }),
  };
}

/** One toolchain per name: the first that names a version (python.ts's over notebook.ts's "any Python"), else the first. */
function mergeToolchains(parts: EnvironmentPart[]): Toolchain[] {
  const byName = new Map<string, Toolchain>();
  for (const t of parts.flatMap((p) => p.toolchains)) {
    const seen = byName.get(t.name);
    if (!seen || (seen.version === null && t.version !== null)) byName.set(t.name, t);
  }
  return [...byName.values()];
}

function hashManifests(input: EnvironmentInput, parts: EnvironmentPart[], notes: string[]): Environment["manifests"] {
  const paths = [...new Set(parts.flatMap((p) => p.manifests))].filter((p) => input.ctx.byPath.has(p)).sort();
  const out: Environment["manifests"] = [];
  for (const path of paths) {
    const sha256 = input.ctx.sha256?.(path) ?? null;
    if (sha256) out.push({ path, sha256 });
    else notes.push(`${path} could not be hashed (too large or unreadable): a change to it alone does not make a new environment`);
  }
  return out;
}
