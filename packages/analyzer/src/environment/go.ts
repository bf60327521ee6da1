import { compareMinor } from "./python-version.ts";
import { emptyPart, has, majorMinor, type EnvironmentInput, type EnvironmentPart } from "./part.ts";

// Go: go.mod's `go` line is the language version the module needs and its
// `toolchain` line the release it prefers; images are catalogued by minor
// release ("1.22"), and either line is a floor (a newer Go builds it). Runs
// set GOTOOLCHAIN=local, so the image's Go is used rather than a download.

// The modules a build needs, into the module cache (GOMODCACHE is under $CODEPLANE_ENV_DIR,
// archived with the environment). The walk skips vendor/, so whether the repository
// vendors its modules is known only here: go builds from vendor/ then (-mod=vendor is
// its default), and downloading them would need a proxy that holds every one.
const GO_MOD_DOWNLOAD =
  'if [ -f vendor/modules.txt ]; then echo "vendor/modules.txt: go builds from the vendored modules, nothing to download"; else go mod download; fi';

export interface GoMod {
  go: string | null;
  toolchain: string | null;
  /** It requires other modules (so there is something to download). */
  requires: boolean;
}

export function parseGoMod(text: string): GoMod {
  const go = /^go\s+(\d+\.\d+(?:\.\d+)?)\s*$/m.exec(text)?.[1] ?? null;
  const toolchain = /^toolchain\s+go(\d+\.\d+(?:\.\d+)?)\S*\s*$/m.exec(text)?.[1] ?? null;
  return { go, toolchain, requires: /^require\b/m.test(text) };
}

export function resolveGo(input: EnvironmentInput): EnvironmentPart {
  const { ctx } = input;
  const part = emptyPart();
  const hasMod = has(ctx, "go.mod");
  if (!hasMod && !input.experiments.some((e) => e.kind === "go-main")) return part;
  const text = hasMod ? ctx.readText("go.mod") : null;
  if (hasMod && text === null) part.notes.push("go.mod could not be read (too large or binary): its Go version is not known");
  const mod = text === null ? null : parseGoMod(text);
  part.toolchains.push({ name: "go", exact: false, ...goVersion(mod) });
  if (!hasMod) return part;
  part.manifests.push("go.mod", ...["go.sum", "go.work", "go.work.sum"].filter((p) => has(ctx, p)));
  if (has(ctx, "go.sum") || mod?.requires) {
    part.steps.push({
      name: "go mod download",
      run: GO_MOD_DOWNLOAD,
      why: "go.mod requires other modules: they are downloaded once (through GOPROXY, the operator's mirror) into the module cache under $CODEPLANE_ENV_DIR/go, checked against go.sum, so runs build without the network. A repository that vendors them (vendor/modules.txt) builds from those instead.",
      ecosystem: "go",
    });
  }
  // go refuses a build whose modules go.sum does not list ("missing go.sum entry"), with the
  // network or without; the go.sum an install would write is the checkout's, not the
  // environment's, so runs never see it.
  if (mod?.requires && !has(ctx, "go.sum")) {
    part.notes.push(
      "go.mod requires other modules but there is no go.sum: go refuses to build it (missing go.sum entry) until go.sum is committed (go mod tidy)",
    );
  }
  return part;
}

function goVersion(mod: GoMod | null): { version: string | null; source: string } {
  const go = mod?.go ? majorMinor(mod.go) : null;
  const tc = mod?.toolchain ? majorMinor(mod.toolchain) : null;
  if (tc && (!go || compareMinor(tc, go) > 0)) return { version: tc, source: `go.mod toolchain go${mod!.toolchain}` };
  if (go) return { version: go, source: `go.mod go ${mod!.go}` };
  return { version: null, source: mod ? "go.mod (no go line)" : "Go experiments" };
}
