import type { Detector } from "../detector.ts";
import type { EnvVarUse } from "../model.ts";

// Environment templates (`.env.example` and kin) list the variables a
// project expects to be set, so every key in one is a required variable. The
// real `.env` is never read: it would hold someone's secrets.

const TEMPLATE_NAMES = new Set([".env.example", ".env.sample", ".env.template", ".env.dist", "example.env", "env.example"]);

export const detectDotenv: Detector = (ctx) => {
  const envVars: EnvVarUse[] = [];
  for (const file of ctx.files) {
    if (ctx.outOfTime()) break;
    if (!TEMPLATE_NAMES.has(file.path.slice(file.path.lastIndexOf("/") + 1))) continue;
    const text = ctx.readText(file.path);
    if (text === null) continue;
    for (const { name, line } of templateKeys(text)) envVars.push({ name, path: file.path, line, required: true });
  }
  return { experiments: [], envVars };
};

/** The keys a dotenv file assigns, each at its first line, skipping the lines of multi-line quoted values. */
export function templateKeys(text: string): { name: string; line: number }[] {
  const out: { name: string; line: number }[] = [];
  const seen = new Set<string>();
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const m = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$/.exec(lines[i]!);
    if (!m) continue;
    const name = m[1]!;
    if (!seen.has(name)) {
      seen.add(name);
      out.push({ name, line: i + 1 });
    }
    const value = m[2]!;
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
