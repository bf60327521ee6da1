import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";

// What a failed step of a cluster suite (the Helm suite's) leaves behind: every pod's log in the
// release's namespaces (all containers, the previous instance's too) and the
// namespaces' events, each in a file of a folder that outlives the suite, and
// a bounded tail of each on stderr so a CI log shows the cause without the
// folder (issue 29: a 500 from the Helm-installed service under load, and no
// API pod's log kept to explain it).

/** Runs kubectl with these arguments and resolves with its stdout (rejects with its error). */
export type Kubectl = (...args: string[]) => Promise<string>;

export interface Capture {
  /** File name in the folder. */
  file: string;
  args: string[];
}

/** A name safe as a file name: test titles and pod names become `[A-Za-z0-9._-]`, at most 100 characters. */
export function fileSafe(name: string): string {
  const safe = name.replace(/[^A-Za-z0-9._-]+/g, "-").replace(/^-+|-+$/g, "");
  return (safe || "step").slice(0, 100);
}

/** The last `maxLines` lines of `text`, at most `maxChars` characters, saying how much was left out. */
export function tail(text: string, maxLines: number, maxChars: number): string {
  const lines = text.replace(/\n$/, "").split("\n");
  let kept = lines.slice(-maxLines).join("\n");
  if (kept.length > maxChars) kept = kept.slice(-maxChars);
  const omitted = text.length - kept.length;
  return omitted > 1 ? `[... ${omitted} characters before]\n${kept}` : kept;
}

/** What to capture for these namespaces and their pods: events and pods per namespace, then each pod's logs, current and previous. */
export function capturesFor(pods: { namespace: string; name: string }[], namespaces: string[]): Capture[] {
  const captures: Capture[] = namespaces.flatMap((ns) => [
    { file: `${ns}.events.txt`, args: ["-n", ns, "get", "events", "--sort-by=.lastTimestamp", "-o", "wide"] },
    { file: `${ns}.pods.txt`, args: ["-n", ns, "get", "pods", "-o", "wide"] },
    { file: `${ns}.describe-pods.txt`, args: ["-n", ns, "describe", "pods"] },
  ]);
  for (const { namespace, name } of pods) {
    const logs = ["-n", namespace, "logs", name, "--all-containers", "--prefix", "--timestamps"];
    captures.push({ file: `${namespace}.${fileSafe(name)}.log`, args: logs });
    captures.push({ file: `${namespace}.${fileSafe(name)}.previous.log`, args: [...logs, "--previous"] });
  }
  return captures;
}

/** The pods of these namespaces, as `kubectl get pods -o name` lists them; a namespace kubectl cannot list adds none. */
async function podsOf(kubectl: Kubectl, namespaces: string[]): Promise<{ namespace: string; name: string }[]> {
  const all = await Promise.all(
    namespaces.map(async (namespace) => {
      const out = await kubectl("-n", namespace, "get", "pods", "-o", "name").catch(() => "");
      return out
        .split("\n")
        .filter(Boolean)
        .map((line) => ({ namespace, name: line.replace(/^pod\//, "") }));
    }),
  );
  return all.flat();
}

/**
 * Saves the namespaces' events and every pod's logs into `folder/<step>/`, one file per
 * capture (a capture that fails saves kubectl's error instead), and writes a tail of each
 * (`tailLines` lines, at most 4,000 characters) to `log`. Resolves with the folder written.
 */
export async function saveDiagnostics(opts: {
  kubectl: Kubectl;
  namespaces: string[];
  folder: string;
  step: string;
  log: (text: string) => void;
  tailLines?: number;
}): Promise<string> {
  const out = path.join(opts.folder, fileSafe(opts.step));
  mkdirSync(out, { recursive: true });
  const captures = capturesFor(await podsOf(opts.kubectl, opts.namespaces), opts.namespaces);
  const sections: string[] = [];
  for (const c of captures) {
    const text = await opts
      .kubectl(...c.args)
      .catch((err: unknown) => `(kubectl ${c.args.join(" ")} failed: ${err instanceof Error ? err.message : String(err)})\n`);
    writeFileSync(path.join(out, c.file), text);
    sections.push(`--- ${c.file}\n${tail(text, opts.tailLines ?? 30, 4_000)}`);
  }
  opts.log(`"${opts.step}" failed; the release's pod logs and events are in ${out}\n${sections.join("\n")}\n`);
  return out;
}
