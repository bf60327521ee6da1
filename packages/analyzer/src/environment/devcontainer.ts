import type { AnalyzerContext } from "../detector.ts";
import type { DeclaredImage } from "../model.ts";
import { asTable } from "./part.ts";

// A repository's own declaration of the image it runs in: a Dev Container
// configuration (https://containers.dev/implementors/json_reference/) with an
// `image`. The analyzer only records what is declared and where; whether the
// image is used is the operator's policy, applied by the service
// (CODEPLANE_ENVIRONMENT_ALLOWED_REGISTRIES). codeplane builds no images, so a
// configuration that builds one (a Dockerfile, Docker Compose) is a note.

/** Larger configurations are not read (real ones are a few KiB). */
export const DEVCONTAINER_MAX_BYTES = 256 * 1024;
/** The longest image reference recorded (the service validates it properly). */
const MAX_IMAGE_CHARS = 512;

const DEFAULT_PATHS = [".devcontainer/devcontainer.json", ".devcontainer.json"];
const NAMED = /^\.devcontainer\/[^/]+\/devcontainer\.json$/;
const LIFECYCLE = ["initializeCommand", "onCreateCommand", "updateContentCommand", "postCreateCommand", "postStartCommand", "postAttachCommand"];

export interface DevcontainerResult {
  declared: DeclaredImage | null;
  notes: string[];
}

/**
 * The configurations in the order the Dev Container spec looks for them:
 * `.devcontainer/devcontainer.json`, `.devcontainer.json`, then
 * `.devcontainer/<name>/devcontainer.json` (by name).
 */
export function devcontainerPaths(ctx: AnalyzerContext): string[] {
  return [...DEFAULT_PATHS.filter((p) => ctx.byPath.has(p)), ...ctx.files.map((f) => f.path).filter((p) => NAMED.test(p))];
}

export function resolveDevcontainer(ctx: AnalyzerContext): DevcontainerResult {
  const paths = devcontainerPaths(ctx);
  const notes: string[] = [];
  if (paths.length === 0) return { declared: null, notes };
  const path = paths[0]!;
  if (paths.length > 1) {
    notes.push(
      `${paths.length} dev container configurations: ${path} is used (the one the Dev Container spec looks for first); not used: ${list(paths.slice(1), 8)}`,
    );
  }
  const size = ctx.byPath.get(path)!.size;
  if (size > DEVCONTAINER_MAX_BYTES) {
    notes.push(`${path} is too large to read (${size} bytes, at most ${DEVCONTAINER_MAX_BYTES}): its image is not used`);
    return { declared: null, notes };
  }
  const text = ctx.readText(path);
  if (text === null) {
    notes.push(`${path} could not be read (binary or too large): its image is not used`);
    return { declared: null, notes };
  }
  let parsed: unknown;
  try {
    parsed = parseJsonc(text);
  } catch (err) {
    notes.push(`${path} is not valid JSON (comments and trailing commas allowed): ${(err as Error).message.slice(0, 200)}; its image is not used`);
    return { declared: null, notes };
  }
  if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) {
    notes.push(`${path} is not a JSON object: its image is not used`);
    return { declared: null, notes };
  }
  const config = parsed as Record<string, unknown>;
  notes.push(...ignoredFields(path, config));
  return { declared: declaredImage(path, config, notes), notes };
}

function declaredImage(path: string, config: Record<string, unknown>, notes: string[]): DeclaredImage | null {
  if (config.dockerComposeFile !== undefined) {
    notes.push(
      `${path} runs Docker Compose services (dockerComposeFile): codeplane does not build images or run compose services, so the catalog's image is used`,
    );
    return null;
  }
  if (config.build !== undefined || config.dockerFile !== undefined) {
    notes.push(`${path} builds its image from a Dockerfile (build): codeplane does not build images, so the catalog's image is used`);
    return null;
  }
  const image = config.image;
  if (image === undefined) return null;
  if (typeof image !== "string" || image.trim() === "") {
    notes.push(`${path}: image is not a non-empty string, so the catalog's image is used`);
    return null;
  }
  const ref = image.trim();
  if (ref.includes("${")) {
    notes.push(`${path}: image ${ref.slice(0, 100)} uses a variable, which codeplane does not substitute, so the catalog's image is used`);
    return null;
  }
  if (ref.length > MAX_IMAGE_CHARS || /\s/.test(ref)) {
    notes.push(`${path}: image is not an image reference (too long, or holds spaces), so the catalog's image is used`);
    return null;
  }
  return { image: ref, path };
}

/** What a Dev Container does that a codeplane run does not: each said once, never acted on. */
function ignoredFields(path: string, config: Record<string, unknown>): string[] {
  const notes: string[] = [];
  for (const field of ["containerEnv", "remoteEnv"]) {
    const names = Object.keys(asTable(config[field]));
    if (names.length) {
      notes.push(
        `${path}: ${field} (${list(names, 8)}) is not applied to runs; set what a run needs as environment variables (POST /v1/environment-variables)`,
      );
    }
  }
  const features = Object.keys(asTable(config.features));
  if (features.length) notes.push(`${path}: features (${list(features, 8)}) are not installed; the image must already hold what they add`);
  const lifecycle = LIFECYCLE.filter((k) => config[k] !== undefined);
  if (lifecycle.length) {
    notes.push(`${path}: ${lifecycle.join(", ")} ${lifecycle.length === 1 ? "is" : "are"} not run; the install steps come from the repository's manifests`);
  }
  return notes;
}

const list = (items: readonly string[], max: number) =>
  items.length > max ? `${items.slice(0, max).join(", ")} and ${items.length - max} more` : items.join(", ");

/**
 * JSON with comments (`//`, `/* *\/`) and trailing commas, as the Dev Container
 * spec reads its configuration (jsonc): comments and trailing commas are
 * removed outside strings, then JSON.parse reads the rest. Throws
 * SyntaxError on anything else that is not JSON.
 */
export function parseJsonc(text: string): unknown {
  return JSON.parse(withoutTrailingCommas(withoutComments(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text)));
}

/** The end of the string literal that starts at `start` (the index after its closing quote). */
function stringEnd(text: string, start: number): number {
  let i = start + 1;
  while (i < text.length && text[i] !== '"') i += text[i] === "\\" ? 2 : 1;
  return Math.min(i + 1, text.length);
}

function withoutComments(text: string): string {
  const out: string[] = [];
  let from = 0;
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === '"') {
      i = stringEnd(text, i);
    } else if (c === "/" && text[i + 1] === "/") {
      out.push(text.slice(from, i));
      const nl = text.indexOf("\n", i);
      i = from = nl < 0 ? text.length : nl;
    } else if (c === "/" && text[i + 1] === "*") {
      out.push(text.slice(from, i), " ");
      const end = text.indexOf("*/", i + 2);
      if (end < 0) throw new SyntaxError("a /* comment is never closed");
      i = from = end + 2;
    } else {
      i += 1;
    }
  }
  out.push(text.slice(from));
  return out.join("");
}

function withoutTrailingCommas(text: string): string {
  const out: string[] = [];
  let from = 0;
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === '"') {
      i = stringEnd(text, i);
      continue;
    }
    if (c === ",") {
      let j = i + 1;
      while (j < text.length && /\s/.test(text[j]!)) j += 1;
      if (text[j] === "}" || text[j] === "]") {
        out.push(text.slice(from, i));
        from = i + 1;
      }
    }
    i += 1;
  }
  out.push(text.slice(from));
  return out.join("");
}
