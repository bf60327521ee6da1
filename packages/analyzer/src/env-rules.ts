// Rules about environment variables that hold for every language.

/**
 * Variables a launcher, scheduler or the system sets for the program: torchrun
 * and torch.distributed (RANK, WORLD_SIZE, ...), MPI, Slurm, Kubernetes and
 * the shell. A program that reads them needs nothing from the user, so they
 * are never reported as required.
 */
const PROVIDED = new Set([
  "RANK",
  "LOCAL_RANK",
  "WORLD_SIZE",
  "LOCAL_WORLD_SIZE",
  "GROUP_RANK",
  "ROLE_RANK",
  "ROLE_WORLD_SIZE",
  "MASTER_ADDR",
  "MASTER_PORT",
  "NODE_RANK",
  "HOME",
  "PATH",
  "USER",
  "LOGNAME",
  "PWD",
  "SHELL",
  "TERM",
  "HOSTNAME",
  "LANG",
  "TMPDIR",
  "KUBERNETES_SERVICE_HOST",
  "KUBERNETES_SERVICE_PORT",
  "CI",
  "GITHUB_ACTIONS",
  "NODE_ENV",
  "INIT_CWD",
]);
// npm (and yarn, pnpm) set npm_package_*, npm_config_* and npm_lifecycle_* for the scripts they run.
const PROVIDED_PREFIXES = [
  "TORCHELASTIC_",
  "SLURM_",
  "OMPI_COMM_WORLD_",
  "PMI_",
  "PMIX_",
  "MV2_",
  "GITHUB_",
  "RUNNER_",
  "npm_package_",
  "npm_config_",
  "npm_lifecycle_",
];

export function providedByLauncher(name: string): boolean {
  return PROVIDED.has(name) || PROVIDED_PREFIXES.some((p) => name.startsWith(p));
}

/** Basenames of environment templates (`.env.example` and kin). */
export const ENV_TEMPLATE_NAMES = new Set([".env.example", ".env.sample", ".env.template", ".env.dist", "example.env", "env.example"]);

export const isEnvTemplate = (path: string): boolean => ENV_TEMPLATE_NAMES.has(path.slice(path.lastIndexOf("/") + 1));

export interface EnvUse {
  name: string;
  path: string;
  line: number;
  required: boolean;
}

/**
 * One entry per variable from every detector's uses (in detector order), at
 * its first required use in code, else its first use. Required when some
 * experiment requires it (`required`, the union of the experiments'
 * `required_env_vars`, see reach.ts): a template's value neither makes a
 * variable required nor excuses it, since nothing loads a template when the
 * program starts.
 */
export function mergeEnvUses<T extends EnvUse>(uses: readonly T[], required: ReadonlySet<string>): T[] {
  const byName = new Map<string, T>();
  for (const use of uses) {
    const at = byName.get(use.name);
    if (!at || (use.required && !isEnvTemplate(use.path) && (!at.required || isEnvTemplate(at.path)))) byName.set(use.name, use);
  }
  return [...byName.values()].map((at) => ({ ...at, required: required.has(at.name) }));
}

/**
 * The uses a detector hands on: the first use of each variable, and the first
 * required use of each variable in each file (what an experiment that reaches
 * the file needs). Keeping every use instead cost tens of MiB on a repository
 * that reads the environment on every other line.
 */
export class EnvUseSet<T extends EnvUse = EnvUse> {
  readonly #any = new Map<string, T>();
  readonly #required = new Map<string, T>();

  addAll(uses: readonly T[]): void {
    for (const use of uses) this.add(use);
  }

  add(use: T): void {
    const any = this.#any.get(use.name);
    if (!any || before(use, any)) this.#any.set(use.name, use);
    if (!use.required) return;
    const key = `${use.path}\0${use.name}`;
    const seen = this.#required.get(key);
    if (!seen || use.line < seen.line) this.#required.set(key, use);
  }

  list(): T[] {
    const out = [...this.#required.values()];
    for (const use of this.#any.values()) if (!use.required) out.push(use);
    return out.sort((a, b) => compare(a.path, b.path) || a.line - b.line || compare(a.name, b.name));
  }
}

const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
const before = (a: EnvUse, b: EnvUse): boolean => (compare(a.path, b.path) || a.line - b.line || compare(a.name, b.name)) < 0;
