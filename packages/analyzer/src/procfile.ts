// A root Procfile (`web: gunicorn app:app --bind 0.0.0.0:$PORT`, `worker:
// celery -A tasks worker`, `web: node server.js`) names the processes a
// platform starts. Each line is read into its process name and words; each
// ecosystem's detector turns the lines it can run into experiments (Python:
// detectors/python/web.ts; Node: detectors/node/detector.ts). A line the shell
// would have to interpret (`&&`, pipes, `$(...)`, quotes) is left alone; a
// `$VAR` the platform sets (`--port $PORT`) is left to the consumer, which
// drops the option that holds it.

export interface ProcfileLine {
  /** The process type: web, worker, release, clock, ... */
  process: string;
  /** The command's words, after `exec` and leading `NAME=value` assignments. */
  words: string[];
}

const SHELL = /[;&|<>`'"\\()]|\$\(/;

export function readProcfile(text: string): ProcfileLine[] {
  const out: ProcfileLine[] = [];
  for (const raw of text.split(/\r?\n/).slice(0, 100)) {
    const m = /^([A-Za-z0-9_-]+):\s*(.{1,1000})$/.exec(raw.trim());
    if (!m) continue;
    // A word quoted whole ('app:create_app()') is that word; any other shell syntax leaves the line alone.
    const words = m[2]!
      .trim()
      .split(/\s+/)
      .map((w) => (/^'[^']*'$|^"[^"$`\\]*"$/.test(w) ? { text: w.slice(1, -1), quoted: true } : { text: w, quoted: false }));
    if (words.some((w) => !w.quoted && SHELL.test(w.text))) continue;
    let i = 0;
    while (i < words.length && (words[i]!.text === "exec" || /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[i]!.text))) i++;
    if (i < words.length) out.push({ process: m[1]!, words: words.slice(i).map((w) => w.text) });
  }
  return out;
}

/** Whether a word holds a platform variable (`$PORT`, `0.0.0.0:${PORT}`), which a pod does not set. */
export const holdsVariable = (word: string): boolean => word.includes("$");

/**
 * The words without the options whose value holds a platform variable
 * (`--port $PORT`, `--bind=0.0.0.0:$PORT`): the program's default is used
 * instead. Null when another word holds one (a positional cannot be dropped).
 */
export function withoutPlatformOptions(words: readonly string[]): string[] | null {
  const out: string[] = [];
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    if (!holdsVariable(w)) {
      out.push(w);
      continue;
    }
    if (w.startsWith("-") && w.includes("=")) continue; // --bind=0.0.0.0:$PORT
    const prev = out.at(-1);
    if (prev?.startsWith("-") && !prev.includes("=")) {
      out.pop(); // --port $PORT
      continue;
    }
    return null;
  }
  return out;
}
