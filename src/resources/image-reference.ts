// Container image references, and the operator's policy for images a
// repository declares for itself (CODEPLANE_ENVIRONMENT_ALLOWED_REGISTRIES).
// Pure. References follow the grammar Docker and containerd read
// (github.com/distribution/reference): `python:3.12` is
// `docker.io/library/python:3.12`, a first segment with a dot or a port, or
// `localhost`, is a registry host. Matching is on whole path segments, never
// on a substring: `ghcr.io/acme` allows `ghcr.io/acme/x:1`, not
// `ghcr.io/acme-evil/x:1`.

export interface ImageReference {
  /** The registry host, lowercased, with its port (`docker.io`, `ghcr.io`, `localhost:5000`). */
  registry: string;
  /** The repository path below the registry (`library/python`, `acme/tools`). */
  path: string;
  tag: string | null;
  /** `sha256:<hex>`; the image's content, whatever its tag says. */
  digest: string | null;
  /** registry/path: what a registry prefix is matched against. */
  name: string;
  /** The full reference the pods use: registry/path, then :tag (`:latest` when neither tag nor digest is given), then @digest. */
  normalized: string;
}

export type Parsed<T> = { ok: true; value: T } | { ok: false; reason: string };

const DOCKER_HUB = "docker.io";
const HOST_PART = /^(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])$/;
const PORT = /^[0-9]{1,5}$/;
const PATH_SEGMENT = /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$/;
const TAG = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/;
const DIGEST = /^(?:sha256:[0-9a-f]{64}|sha512:[0-9a-f]{128})$/;
const MAX_NAME = 255;
const MAX_REFERENCE = 512;

/** Whether a reference's first segment names a registry host (as Docker decides it). */
const isHost = (segment: string) => segment.includes(".") || segment.includes(":") || segment === "localhost" || segment !== segment.toLowerCase();

function parseHost(host: string): Parsed<string> {
  const [hostname, port, ...rest] = host.split(":");
  if (rest.length || hostname === "" || !hostname!.split(".").every((p) => HOST_PART.test(p)) || (port !== undefined && !PORT.test(port))) {
    return { ok: false, reason: `'${host}' is not a registry host` };
  }
  const lower = host.toLowerCase();
  // Docker Hub's other names.
  return { ok: true, value: lower === "index.docker.io" || lower === "registry-1.docker.io" ? DOCKER_HUB : lower };
}

function parsePath(segments: readonly string[], what: string): Parsed<string> {
  for (const s of segments) {
    if (s !== s.toLowerCase()) return { ok: false, reason: `${what}: repository names are lowercase ('${s}')` };
    if (!PATH_SEGMENT.test(s)) return { ok: false, reason: `${what}: '${s}' is not a repository path segment` };
  }
  return { ok: true, value: segments.join("/") };
}

/** A reference as a repository wrote it, checked and normalised; why not when it is no reference. */
export function parseImageReference(text: string): Parsed<ImageReference> {
  const ref = text.trim();
  const what = `'${ref.slice(0, 200)}' is not an image reference`;
  if (ref === "" || ref.length > 1024 || /[\s]/.test(ref)) return { ok: false, reason: what };
  const at = ref.indexOf("@");
  const digest = at < 0 ? null : ref.slice(at + 1);
  if (digest !== null && !DIGEST.test(digest)) return { ok: false, reason: `${what}: its digest must be sha256: and 64 lowercase hex digits` };
  const named = at < 0 ? ref : ref.slice(0, at);
  const slash = named.lastIndexOf("/");
  const colon = named.lastIndexOf(":");
  const tag = colon > slash ? named.slice(colon + 1) : null;
  if (tag !== null && !TAG.test(tag)) return { ok: false, reason: `${what}: '${tag}' is not a tag` };
  const name = tag === null ? named : named.slice(0, colon);
  const segments = name.split("/");
  let registry = DOCKER_HUB;
  if (segments.length > 1 && isHost(segments[0]!)) {
    const host = parseHost(segments.shift()!);
    if (!host.ok) return { ok: false, reason: `${what}: ${host.reason}` };
    registry = host.value;
  }
  // Docker Hub's official images: `python` is `library/python`.
  if (registry === DOCKER_HUB && segments.length === 1) segments.unshift("library");
  const path = parsePath(segments, what);
  if (!path.ok) return path;
  const full = `${registry}/${path.value}`;
  if (full.length > MAX_NAME) return { ok: false, reason: `${what}: its name is longer than ${MAX_NAME} characters` };
  const suffix = `${tag !== null ? `:${tag}` : digest === null ? ":latest" : ""}${digest !== null ? `@${digest}` : ""}`;
  const normalized = `${full}${suffix}`;
  // What a Run resource's image holds (src/resources/run.ts).
  if (normalized.length > MAX_REFERENCE) return { ok: false, reason: `${what}: it is longer than ${MAX_REFERENCE} characters` };
  return { ok: true, value: { registry, path: path.value, tag, digest, name: full, normalized } };
}

/**
 * One entry of CODEPLANE_ENVIRONMENT_ALLOWED_REGISTRIES: a registry host,
 * optionally with a path below it (`ghcr.io`, `ghcr.io/acme`,
 * `localhost:5000/team`, `docker.io/library`), normalised (host lowercased,
 * no trailing slash). Never a tag or a digest, and it must start with a host:
 * `python` alone would be ambiguous.
 */
export function parseRegistryPrefix(text: string): Parsed<string> {
  const prefix = text.trim().replace(/\/+$/, "");
  const [host, ...segments] = prefix.split("/");
  if (!host || !isHost(host)) {
    return { ok: false, reason: `'${prefix}' must start with a registry host (ghcr.io/acme, docker.io/library, localhost:5000)` };
  }
  if (prefix.includes("@")) return { ok: false, reason: `'${prefix}' names a digest: a prefix is a registry host and path` };
  const parsedHost = parseHost(host);
  if (!parsedHost.ok) return parsedHost;
  if (segments.some((s) => s.includes(":"))) return { ok: false, reason: `'${prefix}' names a tag: a prefix is a registry host and path` };
  const path = parsePath(segments, `'${prefix}'`);
  if (!path.ok) return path;
  return { ok: true, value: segments.length ? `${parsedHost.value}/${path.value}` : parsedHost.value };
}

/** The prefix that allows this image (the longest), or null: on whole path segments only. */
export function allowingPrefix(image: ImageReference, prefixes: readonly string[]): string | null {
  const allowing = prefixes.filter((p) => image.name === p || image.name.startsWith(`${p}/`));
  return allowing.sort((a, b) => b.length - a.length)[0] ?? null;
}
