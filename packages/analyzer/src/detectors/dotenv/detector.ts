import type { Detector } from "../../detector.ts";
import { isEnvTemplate } from "../../env-rules.ts";
import type { EnvVarUse } from "../../model.ts";

// Environment variables named outside the code:
// - Environment templates (`.env.example` and kin) document the variables a
//   project expects. Nothing loads a template when the program starts, so
//   its values are neither defaults nor demands: its keys are listed, never
//   required. Whether a variable is required is decided by the code.
// - Prisma schemas: `env("DATABASE_URL")` in a datasource (or generator) is a
//   variable Prisma refuses to start without, required of whatever program
//   uses the Prisma client (see reach.ts).
// - Compose files: `${VAR:?message}` and `${VAR?message}` stop `docker compose`
//   when VAR is unset (required of the commands that run compose); `${VAR}`
//   and `${VAR:-default}` do not.
// The real `.env` is never read: it would hold someone's secrets.

const COMPOSE = /^(docker-)?compose(\.[\w-]+)?\.ya?ml$/;

export const detectDotenv: Detector = (ctx) => {
  const envVars: EnvVarUse[] = [];
  for (const file of ctx.files) {
    if (ctx.outOfTime()) break;
    const base = file.path.slice(file.path.lastIndexOf("/") + 1);
    const kind = isEnvTemplate(file.path) ? "template" : base.endsWith(".prisma") ? "prisma" : COMPOSE.test(base) ? "compose" : null;
    if (!kind) continue;
    const text = ctx.readText(file.path);
    if (text === null) continue;
    if (kind === "template") for (const { name, line } of templateKeys(text)) envVars.push({ name, path: file.path, line, required: false });
    else envVars.push(...(kind === "prisma" ? prismaEnv(text) : composeEnv(text)).map((u) => ({ ...u, path: file.path })));
  }
  return { experiments: [], envVars };
};

/** `env("X")` outside comments in a Prisma schema: required. */
export function prismaEnv(text: string): Omit<EnvVarUse, "path">[] {
  const out: Omit<EnvVarUse, "path">[] = [];
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.replace(/\/\/.*$/, "");
    for (const m of line.matchAll(/\benv\(\s*"([A-Za-z_][A-Za-z0-9_]*)"\s*\)/g)) out.push({ name: m[1]!, line: i + 1, required: true });
  });
  return out;
}

/** `${VAR...}` interpolations of a compose file: required for `:?` and `?`, not for a plain or defaulted one. `$${X}` is an escaped dollar. */
export function composeEnv(text: string): Omit<EnvVarUse, "path">[] {
  const out: Omit<EnvVarUse, "path">[] = [];
  text.split(/\r?\n/).forEach((raw, i) => {
    if (/^\s*#/.test(raw)) return;
    for (const m of raw.matchAll(/(\$?)\$\{([A-Za-z_][A-Za-z0-9_]*)(:?[?+-])?/g)) {
      if (m[1]) continue;
      out.push({ name: m[2]!, line: i + 1, required: m[3] === "?" || m[3] === ":?" });
    }
  });
  return out;
}

/** The keys a dotenv file assigns, each at its first line with its value (unquoted, comment dropped), skipping the lines of multi-line quoted values. */
export function templateKeys(text: string): { name: string; line: number; value: string }[] {
  const out: { name: string; line: number; value: string }[] = [];
  const seen = new Set<string>();
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const m = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$/.exec(lines[i]!);
    if (!m) continue;
    const name = m[1]!;
    const value = m[2]!;
    if (!seen.has(name)) {
      seen.add(name);
      out.push({ name, line: i + 1, value: valueOf(value) });
    }
    const quote = value[0];
    if ((quote === '"' || quote === "'" || quote === "`") && !closes(value.slice(1), quote)) {
      while (i + 1 < lines.length && !closes(lines[i + 1]!, quote)) i++;
      i++;
    }
  }
  return out;
}

function closes(rest: string, quote: string): boolean {
  for (let i = 0; i < rest.length; i++) {
    if (rest[i] === "\\" && quote === '"') i++;
    else if (rest[i] === quote) return true;
  }
  return false;
}

/** `"a b"` → `a b`; `x # note` → `x`. */
function valueOf(raw: string): string {
  const v = raw.trim();
  const quote = v[0];
  if (quote === '"' || quote === "'" || quote === "`") {
    const end = v.indexOf(quote, 1);
    return end > 0 ? v.slice(1, end) : v.slice(1);
  }
  return v.replace(/\s+#.*$/, "").trim();
}
