import type { Detector } from "../../detector.ts";
import { isEnvTemplate } from "../../env-rules.ts";
import type { EnvVarUse } from "../../model.ts";

// Environment templates (`.env.example` and kin) list the variables a
// project expects to be set. A key the template leaves empty, or fills with a
// placeholder (`your-key-here`, `<token>`, `sk_test_...`, `changeme`), is one
// the user must set: required. A key with a real value (`DEBUG=false`,
// `REDIS_URL=redis://localhost:6379/0`) comes with its default: not required.
// The analysis then weighs the code's own reads against the template (see
// analyze.ts). The real `.env` is never read: it would hold someone's secrets.

export const detectDotenv: Detector = (ctx) => {
  const envVars: EnvVarUse[] = [];
  for (const file of ctx.files) {
    if (ctx.outOfTime()) break;
    if (!isEnvTemplate(file.path)) continue;
    const text = ctx.readText(file.path);
    if (text === null) continue;
    for (const { name, line, value } of templateKeys(text)) envVars.push({ name, path: file.path, line, required: isPlaceholder(value) });
  }
  return { experiments: [], envVars };
};

/** A template value that stands for something the user must fill in. */
export function isPlaceholder(value: string): boolean {
  const v = value.trim();
  return (
    v === "" ||
    /^(\.\.\.|…|x+|X+|\*+|-+|_+|\?+|null|none|todo|tbd|fixme|changeme|change[-_ ]?me|replace[-_ ]?me|secret|password|token)$/i.test(v) ||
    /^<.*>$|^\$\{.*\}$|^\[.*\]$|^\{\{.*\}\}$/.test(v) ||
    /(\.\.\.|…)$/.test(v) ||
    /\b(your|my)[-_ ]?[a-z0-9]*[-_ ]?(key|token|secret|password|id|here|name|url|dsn|api)|(_|-|\b)here$|change[-_ ]?me|replace[-_ ]?(me|this|with)|fill[-_ ]?(me|in)|insert[-_ ]/i.test(
      v,
    )
  );
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
