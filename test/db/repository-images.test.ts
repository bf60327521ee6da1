import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findEnvironment } from "../../src/domain/environments/environment-rows.ts";
import { EnvironmentService } from "../../src/domain/environments/environments.ts";
import { NO_ENVIRONMENT, type AnalyzedEnvironment } from "../../src/domain/environments/resolve.ts";
import type { DomainError } from "../../src/domain/errors.ts";
import type { GitSource } from "../../src/domain/repositories/git-port.ts";
import { RunService, type RunLauncher } from "../../src/domain/runs/runs.ts";
import { createRootLogger } from "../../src/logger.ts";
import { DEFAULT_COMPUTE_TYPES } from "../../src/resources/compute-types.ts";
import type { Catalog } from "../../src/resources/environment-catalog.ts";
import type { RunSpec } from "../../src/resources/run.ts";
import { DirectoryStore } from "../../src/storage/directory-store.ts";
import { seedAccountWithRepository } from "../helpers/seed.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/service.ts";

// A repository's own image (its .devcontainer/devcontainer.json `image`) as a
// run gets it: the real run and environment services over Postgres, with
// only git and the cluster faked. Allowed by the operator's registry prefixes,
// the run's image is the declared one and its environment is built with the
// image contract checked first; otherwise the run gets the catalog's image.

const logger = createRootLogger("silent");
const COMMIT = "d".repeat(40);
const CATALOG: Catalog = [{ image: "runner:dev", toolchains: { python: "3.11", node: "24" }, packages: [] }];

let database: TestDatabase;
let dir: string;
let who: { accountId: string; repositoryId: string };
let analyzed: AnalyzedEnvironment | null;
const created: RunSpec[] = [];

const git = { resolveCommit: async () => COMMIT } as unknown as GitSource;
const launcher: RunLauncher = {
  namespace: "codeplane",
  create: async (spec: RunSpec) => (created.push(spec), { metadata: { name: `run-${spec.runId}`, namespace: "codeplane" } }),
  requestCancel: async () => true,
  delete: async () => {},
};

function runs() {
  const environments = new EnvironmentService({
    store: new DirectoryStore(dir),
    catalog: CATALOG,
    allowedRegistries: ["ghcr.io/acme", "docker.io/library"],
    maxArchiveBytes: 1024 * 1024,
    maxCacheBytes: 1024 * 1024 * 1024,
    logger,
  });
  return new RunService({
    git,
    experiments: { experiment: async () => null, environmentOf: async () => analyzed },
    launcher,
    environments,
    runnerImage: "runner:dev",
    computeTypes: DEFAULT_COMPUTE_TYPES,
    defaultComputeType: "cpu-general",
    defaultTimeoutSeconds: 60,
    maxTimeoutSeconds: 3600,
    logger,
  });
}

const declaring = (image: string, sha: string): AnalyzedEnvironment => ({
  ...NO_ENVIRONMENT,
  toolchains: [{ name: "python", version: "3.11", exact: false, source: "pyproject.toml" }],
  manifests: [{ path: "requirements.txt", sha256: sha.repeat(64) }],
  steps: [{ name: "pip install", run: "pip install -r requirements.txt", why: "requirements.txt", ecosystem: "python" }],
  declared_image: { image, path: ".devcontainer/devcontainer.json" },
});

beforeAll(async () => {
  database = await createTestDatabase();
  who = await seedAccountWithRepository(database.db);
  dir = mkdtempSync(path.join(tmpdir(), "cp-repo-images-"));
});
afterAll(async () => {
  await database?.drop();
  rmSync(dir, { recursive: true, force: true });
});

describe("a run of a commit that declares its own image", () => {
  it.each([
    ["an allowed registry: the declared image", "ghcr.io/acme/py:3.11", "1", "ghcr.io/acme/py:3.11", true],
    ["Docker Hub shorthand under an allowed prefix: normalised", "python:3.12", "2", "docker.io/library/python:3.12", true],
    ["a registry path that only looks alike: the catalog's", "ghcr.io/acme-evil/py:3.11", "3", "runner:dev", false],
    ["a registry nobody allowed: the catalog's", "quay.io/acme/py:3.11", "4", "runner:dev", false],
  ])("%s", async (_what, declared, sha, image, own) => {
    analyzed = declaring(declared, sha);
    const run = await runs().create(database.db, who.accountId, who.repositoryId, "main", { command: ["python3", "main.py"] });
    expect(run.environment).toMatchObject({ image, cache: null });
    const spec = created.at(-1)!;
    expect(spec.image).toBe(image);
    expect(spec.environment!.image).toBe(image);
    // The repository's image is checked against the contract before anything is installed; the catalog's is the operator's.
    expect(spec.environment!.steps.map((s) => s.name)).toEqual(own ? ["check the image against codeplane's image contract", "pip install"] : ["pip install"]);
    const row = await findEnvironment(database.db, who.accountId, run.environment!.key!);
    expect(row).toMatchObject({ image, status: "building" });
    expect(row!.definition.notes.join("\n")).toMatch(
      own ? /own image .* is used: its registry is allowed/ : /not used: .*CODEPLANE_ENVIRONMENT_ALLOWED_REGISTRIES/,
    );
  });

  it("refuses (409) every later run once the image failed the contract, quoting why", async () => {
    analyzed = declaring("ghcr.io/acme/no-node:1", "5");
    const first = await runs().create(database.db, who.accountId, who.repositoryId, "main", { command: ["true"] });
    const key = first.environment!.key!;
    // What the build records when the check fails (the build's failure path: the step and its last lines).
    await database.db
      .updateTable("environments")
      .set({
        status: "failed",
        error:
          "environment build failed in step: [1/2] check the image against codeplane's image contract (exit code 1)\nthe image ghcr.io/acme/no-node:1 does not meet codeplane's image contract: it has no node on PATH",
      })
      .where("key", "=", key)
      .execute();
    const err = await runs()
      .create(database.db, who.accountId, who.repositoryId, "main", { command: ["true"] })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ kind: "conflict" });
    expect((err as DomainError).message).toMatch(
      /failed to build \(environment build failed in step: \[1\/2\] check the image against codeplane's image contract/,
    );
    expect((err as DomainError).message).toContain(`GET /v1/environments/${key}`);
  });

  it("environment none: the runner image, whatever the repository declares", async () => {
    analyzed = declaring("ghcr.io/acme/py:3.11", "1");
    await runs().create(database.db, who.accountId, who.repositoryId, "main", { command: ["true"], environment: "none" });
    const spec = created.at(-1)!;
    expect([spec.image, spec.environment]).toEqual([undefined, undefined]);
  });
});
