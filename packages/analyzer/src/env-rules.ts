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
]);
const PROVIDED_PREFIXES = ["TORCHELASTIC_", "SLURM_", "OMPI_COMM_WORLD_", "PMI_", "PMIX_", "MV2_", "GITHUB_", "RUNNER_"];

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
 * its first required use, else its first use. Required when the code reads it
 * with no fallback (a template's placeholder counts only when no code reads
 * it), never when a template gives it a value or a launcher sets it.
 */
export function mergeEnvUses<T extends EnvUse>(uses: readonly T[]): T[] {
  const byName = new Map<string, T[]>();
  for (const use of uses) {
    const list = byName.get(use.name);
    if (list) list.push(use);
    else byName.set(use.name, [use]);
  }
  const out: T[] = [];
  for (const [name, all] of byName) {
    const code = all.filter((u) => !isEnvTemplate(u.path));
    const templates = all.filter((u) => isEnvTemplate(u.path));
    const decider = code.length ? code : templates;
    const required = !providedByLauncher(name) && !templates.some((u) => !u.required) && decider.some((u) => u.required);
    const at = (required ? decider.find((u) => u.required) : undefined) ?? all[0]!;
    out.push({ ...at, required });
  }
  return out;
}
