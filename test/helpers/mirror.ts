import { execFileSync } from "node:child_process";

// The local cluster's package mirror (hack/cluster/mirror.sh): a PyPI simple
// index, an npm registry and a Go module proxy on the node. Its URLs and the settings runs need to
// use it come from the script itself, the one place `make dev`, the docs'
// example and the tests read them from.

const root = new URL("../..", import.meta.url).pathname;
export const MIRROR_SCRIPT = `${root}hack/cluster/mirror.sh`;

export interface MirrorSettings {
  /** PyPI simple index, e.g. http://10.244.0.1:3141/simple/ */
  pypi: string;
  /** npm registry, e.g. http://10.244.0.1:4873/ */
  npm: string;
  /** Go module proxy (GOPROXY), e.g. http://10.244.0.1:3143 */
  go: string;
  /** CODEPLANE_RUN_EGRESS_ALLOW: the mirror's three ports on its address. */
  egressAllow: string;
  /** CODEPLANE_RUN_PREPROCESS_ENV: PIP_INDEX_URL, PIP_TRUSTED_HOST, UV_INDEX_URL, NPM_CONFIG_REGISTRY, npm_config_registry, GOPROXY, GOSUMDB. */
  preprocessEnv: Record<string, string>;
}

/** The mirror's settings for a host (the node address by default) and, optionally, other ports. */
export function mirrorSettings(host = "10.244.0.1", ports?: { pypi: number; npm: number; go: number }): MirrorSettings {
  const env = {
    ...process.env,
    ...(ports && { MIRROR_PYPI_PORT: String(ports.pypi), MIRROR_NPM_PORT: String(ports.npm), MIRROR_GO_PORT: String(ports.go) }),
  };
  return JSON.parse(execFileSync(MIRROR_SCRIPT, ["env", "--json", host], { env, encoding: "utf8" })) as MirrorSettings;
}
