import type { EnvironmentStep } from "../model.ts";
import { pipfileLockRequirements, pipfileRequirements, poetryConstraints, uvLockNames } from "./python-locks.ts";
import { poetryDirectNames, readPythonProject, type PythonProject } from "./python-project.ts";
import { chooseRequirements, readRequirements, requirementsCandidates } from "./python-requirements.ts";
import { pythonVersion } from "./python-version.ts";
import { emptyPart, has, shellQuote, type EnvironmentInput, type EnvironmentPart } from "./part.ts";
import { parse as parseToml } from "smol-toml";

// Python: one way to install the repository's dependencies, chosen as a
// person would (a lockfile over a loose list, the root's requirements.txt
// over variants), into the venv index.ts creates first. Everything goes
// through pip, whose index the operator points at a mirror (PIP_INDEX_URL);
// lockfiles of other tools are read here and handed to pip as pins, so
// neither poetry nor pipenv is needed. Each step says why it was chosen; what
// was seen and not used is a note.

const PY_KINDS = new Set(["python-script", "python-module", "notebook"]);
/** Where steps write the pins they read from a lock (outside the checkout, archived with the venv). */
const LOCKS_DIR = '"$CODEPLANE_ENV_DIR/locks"';

interface Install {
  steps: EnvironmentStep[];
  manifests: string[];
  names: string[];
  notes: string[];
}

const step = (name: string, run: string, why: string): EnvironmentStep => ({ name, run, why, ecosystem: "python" });

export function resolvePython(input: EnvironmentInput): EnvironmentPart {
  const { ctx } = input;
  const part = emptyPart();
  const project = readPythonProject(ctx);
  const pipfile = has(ctx, "Pipfile") ? tomlOrNull(ctx.readText("Pipfile")) : null;
  const install = chooseInstall(input, project, pipfile);
  part.steps.push(...install.steps);
  part.manifests.push(...install.manifests, ...[".python-version", "runtime.txt"].filter((p) => has(ctx, p)));
  part.packages.push(...install.names);
  part.notes.push(...project.notes, ...install.notes);
  if (has(ctx, "environment.yml") || has(ctx, "environment.yaml")) part.notes.push("environment.yml (conda) is not used: environments are built with pip");
  const version = pythonVersion(ctx, project.doc, pipfile);
  const needed = part.steps.length > 0 || version !== null || input.experiments.some((e) => PY_KINDS.has(e.kind));
  if (needed) {
    part.toolchains.push(
      version
        ? { name: "python", ...version }
        : { name: "python", version: null, exact: false, source: part.steps.length ? "Python dependencies to install" : "Python experiments" },
    );
  }
  return part;
}

function tomlOrNull(text: string | null): Record<string, unknown> | null {
  if (text === null) return null;
  try {
    return parseToml(text);
  } catch {
    return null;
  }
}

function chooseInstall(input: EnvironmentInput, project: PythonProject, pipfile: Record<string, unknown> | null): Install {
  const { ctx } = input;
  const requirements = chooseRequirements(requirementsCandidates(ctx));
  const locked =
    (has(ctx, "uv.lock") && project.doc ? uvInstall(input, project) : null) ??
    (has(ctx, "poetry.lock") && project.doc ? poetryInstall(input, project) : null) ??
    (has(ctx, "Pipfile.lock") ? pipfileLockInstall(input, project) : null);
  if (locked) {
    if (requirements) locked.notes.push(`${requirements.chosen} is not installed: ${locked.manifests[0]} pins the same dependencies more exactly`);
    return locked;
  }
  const out: Install = { steps: [], manifests: [], names: [], notes: [] };
  if (requirements) {
    const read = readRequirements(ctx, requirements.chosen);
    out.steps.push(step(`pip install -r ${requirements.chosen}`, `pip install --no-input -r ${shellQuote(requirements.chosen)}`, `${requirements.why}.`));
    out.manifests.push(...read.files);
    out.names.push(...read.names);
    if (requirements.others.length) out.notes.push(`not installed: ${requirements.others.join(", ")} (${requirements.chosen} was chosen)`);
    for (const f of read.unreadable) out.notes.push(`${f} could not be read (too large or binary): its packages are not listed, pip still installs them`);
    if (!read.installsProject) out.steps.push(...editable(project, false));
  } else if (pipfile) {
    const lines = pipfileRequirements(pipfile);
    if (lines.length)
      out.steps.push(
        step(
          "pip install (Pipfile)",
          writeAndInstall("Pipfile.txt", lines, "-r"),
          "Pipfile without Pipfile.lock: its [packages], resolved by pip at build time.",
        ),
      );
    out.manifests.push("Pipfile");
    out.names.push(...lines);
    out.notes.push("Pipfile has no Pipfile.lock: versions are resolved when the environment is built");
  } else out.steps.push(...projectOnly(project));
  if (out.steps.length) out.manifests.push(...projectManifests(input, project));
  return out;
}

/** The project's own definition files, when it is installed (editable or by its dependency list). */
function projectManifests(input: EnvironmentInput, project: PythonProject): string[] {
  const files = project.doc ? ["pyproject.toml"] : [];
  if (project.isPackage) files.push(...["setup.py", "setup.cfg"].filter((p) => has(input.ctx, p)));
  return files;
}

/**
 * `pip install -e .`: the project installs itself, editable against the
 * checkout, so its console scripts and imports work and the archived venv
 * (reused by later commits of the same manifests) always runs the checkout's
 * code rather than a copy built from an older commit.
 */
function editable(project: PythonProject, noDeps: boolean): EnvironmentStep[] {
  if (!project.isPackage) return [];
  return [
    step(
      "pip install -e .",
      `pip install --no-input${noDeps ? " --no-deps" : ""} -e .`,
      `The project is a package (build backend ${project.backend}): installed editable against the checkout, so its console scripts exist and a reused environment runs this commit's code.${noDeps ? " Its dependencies are already installed from the lock." : ""}`,
    ),
  ];
}

/** No lock and no requirements file: the package itself, or the dependency list of a [project] that is not one. */
function projectOnly(project: PythonProject): EnvironmentStep[] {
  if (project.isPackage) return editable(project, false);
  if (!project.dependencies.length) return [];
  return [
    step(
      "pip install (pyproject.toml dependencies)",
      `pip install --no-input ${project.dependencies.map(shellQuote).join(" ")}`,
      "pyproject.toml lists [project] dependencies but has no [build-system] (an application, not a package): its dependencies are installed, the project is not.",
    ),
  ];
}

function uvInstall(input: EnvironmentInput, project: PythonProject): Install | null {
  const names = uvLockNames(input.ctx.readText("uv.lock"));
  const notes = names === null ? ["uv.lock could not be read here (too large or invalid); uv reads it when the environment is built"] : [];
  const out = `"$CODEPLANE_ENV_DIR/locks/uv.txt"`;
  return {
    steps: [
      step(
        "provide uv",
        "command -v uv >/dev/null 2>&1 || pip install --no-input uv",
        "uv.lock is read by uv: the image's uv when it has one, otherwise uv from the package index (PyPI or the operator's mirror) into the venv.",
      ),
      step(
        "install uv.lock",
        `mkdir -p ${LOCKS_DIR}\nUV_PYTHON_DOWNLOADS=never uv export --frozen --no-hashes --no-emit-project --format requirements-txt -o ${out}\npip install --no-input -r ${out}`,
        "uv.lock pins every dependency: uv exports the locked versions (offline, --frozen) as requirements and pip installs them from the package index pip is configured with (the mirror), which uv's own installer would not read. Dev dependencies are included, as `uv sync` and `uv run` do.",
      ),
      ...editable(project, true),
    ],
    manifests: ["uv.lock", "pyproject.toml", ...projectManifests(input, project).filter((p) => p !== "pyproject.toml")],
    names: [...(names ?? []), ...project.names],
    notes,
  };
}

function poetryInstall(input: EnvironmentInput, project: PythonProject): Install | null {
  const lock = poetryConstraints(input.ctx.readText("poetry.lock"));
  if (!lock) return null; // unreadable: chooseInstall falls back to the project's own declaration
  const direct = project.isPackage ? ["-e", "."] : [...new Set([...poetryDirectNames(project.doc), ...project.dependencies])];
  const target = project.isPackage ? "-e ." : direct.map(shellQuote).join(" ");
  const steps = direct.length
    ? [
        step(
          "install poetry.lock",
          writeAndInstall("poetry.txt", lock.lines, "-c", target),
          `poetry.lock pins every dependency: its versions become pip constraints, and pip installs ${project.isPackage ? `the project (editable; build backend ${project.backend})` : "the project's declared dependencies"} within them, without needing poetry.`,
        ),
      ]
    : [];
  return { steps, manifests: ["poetry.lock", ...projectManifests(input, project)], names: [...lock.names, ...project.names], notes: lock.notes };
}

function pipfileLockInstall(input: EnvironmentInput, project: PythonProject): Install | null {
  const lock = pipfileLockRequirements(input.ctx.readText("Pipfile.lock"));
  if (!lock) return null;
  const installsProject = lock.lines.some((l) => /^(-e )?\.$/.test(l));
  const steps = lock.lines.length
    ? [
        step(
          "install Pipfile.lock",
          writeAndInstall("Pipfile.lock.txt", lock.lines, "-r"),
          "Pipfile.lock pins every dependency: its default packages become requirement lines for pip, without needing pipenv.",
        ),
      ]
    : [];
  if (!installsProject) steps.push(...editable(project, true));
  const manifests = ["Pipfile.lock", ...["Pipfile"].filter((p) => has(input.ctx, p)), ...projectManifests(input, project)];
  return { steps, manifests, names: lock.names, notes: lock.notes };
}

/** Writes lines a lock gave to a file under $CODEPLANE_ENV_DIR/locks (through a quoted here-document) and runs pip with it. */
function writeAndInstall(file: string, lines: readonly string[], flag: "-r" | "-c", target = ""): string {
  const path = `"$CODEPLANE_ENV_DIR/locks/${file}"`;
  const body = lines.filter((l) => l !== "CODEPLANE_EOF" && !/[\r\n]/.test(l));
  return `mkdir -p ${LOCKS_DIR}\ncat > ${path} <<'CODEPLANE_EOF'\n${body.join("\n")}\nCODEPLANE_EOF\npip install --no-input ${flag} ${path}${target ? ` ${target}` : ""}`;
}
