import type { V1EnvVar } from "@kubernetes/client-node";

// Where things are in every workload pod: the workspace volume holds the
// checkout, the installed environment and HOME. The build of an environment
// and every run of it see the same paths and variables, so what the install
// put in ENV_DIR (a venv, Go's module cache) and in the checkout's
// node_modules is found in the run where it was put.

export const WORKSPACE = "/workspace";
export const SOURCE_DIR = `${WORKSPACE}/src`;
/** Everything an install writes outside the checkout; archived after a build, restored at the same path in runs. */
export const ENV_DIR = `${WORKSPACE}/env`;
/** Where the codeplane image keeps the environment archive program (the @codeplane/runner package). */
export const ARCHIVER_IN_IMAGE = "/app/packages/runner/src/environment-archive.ts";

export const environmentVariables = (): V1EnvVar[] => [
  { name: "HOME", value: `${WORKSPACE}/home` },
  { name: "CODEPLANE_SOURCE_DIR", value: SOURCE_DIR },
  { name: "CODEPLANE_ENV_DIR", value: ENV_DIR },
  {
    name: "PATH",
    value: `${ENV_DIR}/python/bin:${SOURCE_DIR}/node_modules/.bin:${ENV_DIR}/go/bin:${WORKSPACE}/home/.local/bin:/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin`,
  },
  { name: "GOPATH", value: `${ENV_DIR}/go` },
  { name: "GOMODCACHE", value: `${ENV_DIR}/go/pkg/mod` },
  { name: "GOCACHE", value: `${ENV_DIR}/go/cache` },
  { name: "GOFLAGS", value: "-modcacherw" },
  { name: "GOTOOLCHAIN", value: "local" },
];

/**
 * The containers that hold a token and run codeplane's own programs (the build's save, the
 * run's restore) find them on the image's system PATH only: a workspace directory first on
 * PATH would let what the repository installed (a `tar` in the venv's bin) run with the token.
 */
export const SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
/** codeplane's image's node (the Node layer's), named absolutely for the same reason. */
export const NODE_IN_IMAGE = "/usr/local/bin/node";

/** environmentVariables with the system PATH: for containers that hold a token. */
export const trustedVariables = (): V1EnvVar[] => environmentVariables().map((v) => (v.name === "PATH" ? { name: "PATH", value: SYSTEM_PATH } : v));
