import { readFileSync } from "node:fs";

// The operators' page "Install with Helm" (docs/operators/helm.md), read as
// the suite's script: the commands it runs are the page's, found by what they
// do, with only what must differ on a test machine substituted (each
// substitution must match exactly once, so a changed page fails here, naming
// the command).

const root = new URL("../..", import.meta.url).pathname;
const HELM_PAGE = "docs/operators/helm.md";

export interface HelmReadme {
  /** The whole page, as written. */
  section: string;
  /** `export KUBECONFIG=... PATH=...`: the local cluster's tools first. */
  toolsPrelude: string;
  /** The install block (Secrets, helm install, rollout status). */
  install: string;
  /** Reaching the API: port-forward, the key read back, a first request. */
  access: string;
  /** `helm upgrade ...` from "Upgrade." */
  upgrade: string;
  /** Adopting CRDs that no release owns. */
  adoptCrds: string;
  /** `helm uninstall ...` from "What ... leaves." */
  uninstall: string;
  /** The paragraph on what uninstall deletes and leaves. */
  uninstallLeaves: string;
}

/** ```sh blocks, indentation (of a list item) removed. */
function shBlocks(text: string): string[] {
  return [...text.matchAll(/^( *)```sh\n([\s\S]*?)^ *```$/gm)].map(([, indent, body]) =>
    body!
      .split("\n")
      .map((l) => (l.startsWith(indent!) ? l.slice(indent!.length) : l))
      .join("\n")
      .trimEnd(),
  );
}

const one = <T>(what: string, found: T[]): T => {
  if (found.length !== 1) throw new Error(`${HELM_PAGE}: expected one ${what}, found ${found.length}`);
  return found[0]!;
};

export function readHelmReadme(file = `${root}${HELM_PAGE}`): HelmReadme {
  const section = readFileSync(file, "utf8");
  if (!section.startsWith("# Install with Helm\n")) throw new Error(`${file} does not start with '# Install with Helm'`);
  const blocks = shBlocks(section);
  const inline = (re: RegExp, what: string) =>
    one(
      what,
      [...section.matchAll(re)].map((m) => m[1]!.replace(/\s+/g, " ").trim()),
    );
  const leavesAt = section.indexOf("**What `helm uninstall");
  return {
    section,
    toolsPrelude: inline(/put its tools first:\s*`(export KUBECONFIG=[^`]+)`/g, "tools prelude (`export KUBECONFIG=...` after 'put its tools first:')"),
    install: one(
      "sh block with helm install",
      blocks.filter((b) => /^helm install /m.test(b)),
    ),
    access: one(
      "sh block with port-forward",
      blocks.filter((b) => /port-forward/.test(b)),
    ),
    upgrade: inline(/`(helm upgrade [^`]+)`/g, "`helm upgrade ...` command"),
    adoptCrds: one(
      "sh block adopting the CRDs",
      blocks.filter((b) => /kubectl (label|annotate) crd/.test(b)),
    ),
    uninstall: inline(/\*\*What `(helm uninstall [^`]+)` leaves\.\*\*/g, "`helm uninstall ...` heading"),
    uninstallLeaves: leavesAt < 0 ? "" : section.slice(leavesAt).replace(/\s+/g, " "),
  };
}

/** `script` with `from` (a string or pattern that must match exactly once) replaced. */
export function substitute(script: string, what: string, from: string | RegExp, to: string): string {
  const re =
    typeof from === "string"
      ? new RegExp(from.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"), "g")
      : new RegExp(from.source, from.flags.includes("g") ? from.flags : `${from.flags}g`);
  const hits = script.match(re)?.length ?? 0;
  if (hits !== 1) throw new Error(`${HELM_PAGE} command, ${what}: expected ${String(from)} once, found it ${hits} times in:\n${script}`);
  return script.replace(re, to);
}

/** The helm install command (its continuation lines included) with `extra` appended. */
export function appendToHelmInstall(script: string, extra: string): string {
  const lines = script.split("\n");
  const first = lines.findIndex((l) => l.startsWith("helm install "));
  if (first < 0) throw new Error(`no helm install line in:\n${script}`);
  let last = first;
  while (lines[last]!.trimEnd().endsWith("\\")) last++;
  lines[last] = `${lines[last]!.trimEnd()} ${extra}`;
  return lines.join("\n");
}
