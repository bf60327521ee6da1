// The command line's grammar: `cpl <group> [<sub>] [args] [options] [-- argv]`.
// Options may come anywhere before `--`, as `--name value`, `--name=value`,
// `-x value` or `-xvalue`; booleans take no value. Everything after `--` is
// left as it is (a run's command). No dependency: this runs on every start.

export interface OptionSpec {
  /** Long name, without the dashes. */
  name: string;
  short?: string;
  /** The value's placeholder (`--output FORMAT`); none for a switch. */
  value?: string;
  /** May be given more than once (values collected in order). */
  repeat?: boolean;
  /** The values it accepts, checked while parsing (and offered by completion). */
  choices?: readonly string[];
  help: string;
}

export interface Parsed {
  positionals: string[];
  options: Record<string, string | boolean | string[]>;
  /** What followed `--`, or null when there was no `--`. */
  rest: string[] | null;
}

export class UsageError extends Error {
  override name = "UsageError";
}

const lookup = (specs: readonly OptionSpec[], token: string): OptionSpec | undefined =>
  token.startsWith("--") ? specs.find((s) => s.name === token.slice(2)) : specs.find((s) => s.short === token.slice(1));

/** Edit distance (insertions, deletions, substitutions), for "did you mean". */
function distance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = row;
  }
  return prev[b.length]!;
}

/** The candidates closest to `word` (at most two edits away, or a prefix of it), best first. */
export function closest(word: string, candidates: readonly string[]): string[] {
  return candidates
    .map((c) => ({ c, d: c.startsWith(word) ? 0 : distance(word, c) }))
    .filter((x) => x.d <= 2)
    .sort((a, b) => a.d - b.d)
    .map((x) => x.c);
}

function suggest(specs: readonly OptionSpec[], name: string): string {
  const [best] = closest(
    name,
    specs.map((s) => s.name),
  );
  return best ? ` (did you mean --${best}?)` : "";
}

function set(out: Parsed["options"], spec: OptionSpec, value: string | true): void {
  if (typeof value === "string" && spec.choices && !spec.choices.includes(value)) {
    throw new UsageError(`--${spec.name} must be one of ${spec.choices.join(", ")} (got ${JSON.stringify(value)})`);
  }
  if (spec.repeat) {
    const list = out[spec.name];
    out[spec.name] = [...(Array.isArray(list) ? list : []), String(value)];
  } else {
    out[spec.name] = value;
  }
}

/** Parses `argv` (the words after the command's name) against the command's options. */
export function parseArgs(argv: readonly string[], specs: readonly OptionSpec[], opts: { passthrough?: boolean } = {}): Parsed {
  const parsed: Parsed = { positionals: [], options: {}, rest: null };
  for (let i = 0; i < argv.length; i++) {
    const token = argv[i]!;
    if (token === "--") {
      if (!opts.passthrough) throw new UsageError("this command takes no `--` arguments");
      parsed.rest = argv.slice(i + 1);
      break;
    }
    if (token === "-" || !token.startsWith("-") || /^-\d/.test(token)) {
      parsed.positionals.push(token);
      continue;
    }
    const eq = token.startsWith("--") ? token.indexOf("=") : -1;
    // -ojson: a short option with its value attached.
    const attached = !token.startsWith("--") && token.length > 2;
    const key = eq > 0 ? token.slice(0, eq) : attached ? token.slice(0, 2) : token;
    const spec = lookup(specs, key);
    if (!spec) throw new UsageError(`unknown option ${key}${token.startsWith("--") ? suggest(specs, key.slice(2)) : ""}`);
    if (!spec.value) {
      if (eq > 0 || attached) throw new UsageError(`${key} takes no value`);
      set(parsed.options, spec, true);
      continue;
    }
    let value: string | undefined;
    if (eq > 0) value = token.slice(eq + 1);
    else if (attached) value = token.slice(2);
    else value = argv[++i];
    if (value === undefined) throw new UsageError(`${key} needs a value (${spec.value})`);
    set(parsed.options, spec, value);
  }
  return parsed;
}

/** `key=value` pairs (run parameters, -p), in order; a later key wins. */
export function keyValues(list: readonly string[], flag: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const item of list) {
    const eq = item.indexOf("=");
    if (eq <= 0) throw new UsageError(`${flag} takes key=value (got ${JSON.stringify(item)})`);
    out[item.slice(0, eq)] = item.slice(eq + 1);
  }
  return out;
}
