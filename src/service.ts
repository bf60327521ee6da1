import { CheckRunSyncer } from "./domain/webhooks/check-run-syncer.ts";
import { analysisCheckRuns } from "./domain/webhooks/analysis-check-runs.ts";
import { runCheckRuns } from "./domain/webhooks/run-check-runs.ts";
import { trackCheckRun } from "./domain/webhooks/check-run-rows.ts";
import { DeliveryWorker } from "./domain/webhooks/delivery-worker.ts";
import { githubCheckRuns } from "./domain/webhooks/github-check-runs.ts";
import { handleDelivery } from "./domain/webhooks/handle.ts";
import { installationSync } from "./domain/webhooks/installation-sync.ts";
import { webhookMetrics } from "./domain/webhooks/webhook-metrics.ts";
import { WebhookService } from "./domain/webhooks/webhooks.ts";
import { NotificationService } from "./domain/notifications/notifications.ts";
import { NotificationWorker } from "./domain/notifications/notification-worker.ts";
import { DomainError } from "./domain/errors.ts";
import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import path from "node:path";
import { Registry } from "prom-client";
import type Koa from "koa";
import { createApps, type ApiServices } from "./api/app.ts";
import { EnvironmentService } from "./domain/environments/environments.ts";
import { OutputService } from "./domain/outputs/outputs.ts";
import { discardOutputRows } from "./domain/runs/run-attempts.ts";
import { createObjectStore } from "./storage/create.ts";
import type { ObjectStore } from "./storage/object-store.ts";
import { listen, type HttpServer } from "./api/server.ts";
import { requestTimeoutFor } from "./api/routes/environment-archives.ts";
import { CheckoutService } from "./domain/checkout/checkout.ts";
import { derivedInternalUrl, type Config } from "./config.ts";
import { openDatabase, type DatabaseHandle } from "./db/database.ts";
import { migrateToLatest } from "./db/migrate.ts";
import { API_KEY_CHANNEL, ApiKeyCache } from "./domain/auth/api-key-cache.ts";
import { listenToChannel, type ChannelListener } from "./db/notifications.ts";
import { createFirstKeyIfEmpty, ensureSeededKey } from "./domain/auth/bootstrap.ts";
import { SecretBox } from "./domain/crypto/secret-box.ts";
import { PoolService } from "./domain/pools/pool-pods.ts";
import { EnvVarService } from "./domain/env-vars/env-vars.ts";
import { GitMirrors } from "./domain/repositories/git/index.ts";
import { RepositoryService } from "./domain/repositories/repositories.ts";
import { githubMirrorCredentials } from "./domain/integrations/github-credentials.ts";
import { InstallStateSigner } from "./domain/integrations/install-state.ts";
import { IntegrationService } from "./domain/integrations/integrations.ts";
import { GitHubApp } from "./integrations/github/index.ts";
import type { Logger } from "./logger.ts";
import { VERSION } from "./version.ts";
import { Controller } from "./controller/controller.ts";
import { LeaderElector } from "./controller/leader-election.ts";
import { RunService } from "./domain/runs/runs.ts";
import { RUN_STREAM_TIMELINE } from "./domain/runs/run-timeline.ts";
import { LogHub } from "./logs/hub.ts";
import { RUN_CHANGES_CHANNEL, RunFeed } from "./domain/runs/run-feed.ts";
import { pgLogStore, type StateExtra } from "./db/log-store.ts";
import { AnalysisService } from "./domain/analyses/analyses.ts";
import { readInstallationId } from "./domain/workloads/installation.ts";
import { ANALYSIS_TABLE, RUN_TABLE, type WorkloadTable } from "./db/workload-tables.ts";
import { ANALYSIS_LABEL, ENVIRONMENT_LABEL, RUN_LABEL } from "./resources/labels.ts";
import { kubeLiveLogSource } from "./k8s/live-log-source.ts";
import { kubeSetupLogSource } from "./k8s/setup-log-source.ts";
import { pgSetupStore } from "./db/setup-store.ts";
import { SETUP_PHASE } from "./api/routes/runs.ts";
import type { SetupOptions } from "./logs/hub.ts";
import { createKubeClients, type KubeClients } from "./k8s/client.ts";
import { DEFAULT_COMPUTE_TYPE } from "./resources/compute-types.ts";
import { GROUP, VERSION as CRD_VERSION } from "./resources/common.ts";
import { RUN_PLURAL } from "./resources/run.ts";
import { AnalysisResources, RunResources } from "./k8s/run-resources.ts";
import { applyWorkloadPolicy } from "./k8s/install.ts";
import { OAuthServer } from "./oauth/index.ts";
import { DashboardSessions } from "./ui/sessions.ts";

const IN_CLUSTER_TOKEN = "/var/run/secrets/kubernetes.io/serviceaccount/token";

// The composition root: the only module that knows every part, and the only
// one that imports src/api. The command line that starts it is src/cli.

export interface Service {
  port: number;
  url: string;
  /** The listener that serves only /git/ (CODEPLANE_GIT_PORT), if any. */
  gitPort: number | null;
  /** The listener that serves /metrics (CODEPLANE_METRICS_PORT), if any. */
  metricsPort: number | null;
  database: DatabaseHandle;
  close(): Promise<void>;
}

export async function startService(config: Readonly<Config>, logger: Logger): Promise<Service> {
  const database = await openDatabase({
    url: config.database.url,
    poolMax: config.database.poolMax,
    preparedStatements: config.database.preparedStatements,
    dataDir: config.dataDir,
    logger,
  });
  let changes: ChannelListener[] = [];
  try {
    if (config.database.migrateOnStart) await migrateToLatest(database.db, logger);
    await bootstrapCredentials(config, database, logger);
    const github = config.github ? new GitHubApp({ config: config.github, logger: logger.child({ component: "github" }) }) : null;
    const git = new GitMirrors({
      cacheDir: config.repositories.gitCacheDir,
      refreshIntervalSeconds: config.repositories.refreshIntervalSeconds,
      maxFileBytes: config.repositories.maxFileBytes,
      commandTimeoutMs: config.repositories.commandTimeoutMs,
      allowLocal: config.repositories.allowLocal,
      maxConcurrentFetches: config.repositories.maxConcurrentFetches,
      maxConcurrentFetchesPerAccount: config.repositories.maxConcurrentFetchesPerAccount,
      fetchQueueWaitMs: config.repositories.fetchQueueWaitMs,
      maxConcurrentUploads: config.repositories.maxConcurrentUploads,
      // Repositories of a GitHub App installation fetch with an installation token minted just before each fetch.
      credentials: githubMirrorCredentials({ db: database.db, github, missing: config.githubMissing, logger: logger.child({ component: "git" }) }),
      logger: logger.child({ component: "git" }),
    });
    const kube = connectKubernetes(config, logger);
    // The run namespace's NetworkPolicy from this process's settings, before any
    // workload can start and before this pod is Ready (the Helm chart's path).
    if (kube && config.components.controller && config.runs.egress.policyName) {
      const plan = await applyWorkloadPolicy(kube.config, config);
      for (const warning of plan.warnings) logger.warn(warning);
      logger.info({ network_policy: plan.networkPolicy.metadata!.name, namespace: plan.namespace, git: plan.git }, "applied the workload NetworkPolicy");
    }
    const box = new SecretBox(config.encryption);
    const envVars = new EnvVarService(box);
    const installation = await readInstallationId(database.db);
    const metrics = new Registry();
    // Environment archives live here (a directory under the data dir, or S3); only API processes serve them.
    const objects = config.components.api ? await createObjectStore(config, logger.child({ component: "object-store" })) : null;
    const api = objects ? apiServices(config, database, git, kube, envVars, box, installation, github, metrics, objects, logger) : null;
    changes = await listenForChanges(config, database, api, logger);
    let elector: LeaderElector | null = null;
    let shuttingDown = false;
    const apps = createApps({
      logger,
      version: VERSION,
      metrics,
      api,
      readiness: [
        { name: "database", check: () => database.ping() },
        { name: "kubernetes", check: () => (kube ? pingKubernetes(kube) : Promise.reject(new Error(NO_KUBERNETES))) },
      ],
      http: config.http,
      webhookLimits: config.webhookIntake,
      rateLimit: { ...config.rateLimit, oauth: config.oauth.rateLimitRequests },
      mcp: config.mcp,
      publicUrl: config.publicUrl,
      isShuttingDown: () => shuttingDown,
      listeners: { git: config.http.gitPort !== null, metrics: config.http.metricsPort !== null },
    });
    const servers: HttpServer[] = [];
    const listenOn = async (app: Koa | null, port: number | null, host = config.http.host) => {
      if (!app || port === null) return null;
      const server = await listen(app, { ...config.http, host, port, logger, requestTimeoutMs: requestTimeoutFor(config.environments.uploadTimeoutMs) });
      servers.push(server);
      return server.port;
    };
    let mainPort: number;
    let gitPort: number | null;
    let metricsPort: number | null;
    try {
      mainPort = (await listenOn(apps.main, config.http.port))!;
      gitPort = await listenOn(apps.git, config.http.gitPort, config.http.gitHost);
      metricsPort = await listenOn(apps.metrics, config.http.metricsPort);
    } catch (err) {
      await Promise.all(servers.map((h) => h.close()));
      throw err;
    }
    const internalUrl = config.runs.internalUrl ?? derivedInternalUrl(config.http.gitHost, gitPort ?? mainPort);
    api?.background.start();
    if (kube && config.components.controller) {
      if (!internalUrl) logger.warn("CODEPLANE_INTERNAL_URL is not set and cannot be derived: runs and analyses will fail at checkout until it is");
      elector = startController(config, kube, database, envVars, box, installation, metrics, internalUrl, api?.outputs ?? null, logger);
    }
    logger.info(
      {
        port: mainPort,
        git_port: gitPort,
        metrics_port: metricsPort,
        database: database.kind,
        version: VERSION,
        components: config.components,
        installation,
        // Where a person opens the dashboard (sign in with an API key of the account).
        ...(api && { dashboard: `${config.publicUrl ?? `http://localhost:${mainPort}`}/ui` }),
      },
      "codeplane is serving",
    );
    return {
      port: mainPort,
      url: `http://127.0.0.1:${mainPort}`,
      gitPort,
      metricsPort,
      database,
      async close() {
        shuttingDown = true;
        // Each step's time is logged: a slow stop says which part held it.
        const steps: Record<string, number> = {};
        const step = async (name: string, work: () => Promise<unknown> | undefined) => {
          const started = performance.now();
          await work();
          steps[name] = Math.round(performance.now() - started);
        };
        // Open streams end without `end`, so their clients reconnect to another replica.
        api?.logHub.close();
        api?.analysisLogHub.close();
        api?.runFeed?.close();
        await step("listeners", () => Promise.all(servers.map((h) => h.close())));
        await step("background", () => api?.background.stop());
        await step("controller", () => elector?.stop());
        await step("notifications", () => Promise.all(changes.map((c) => c.close())));
        objects?.close();
        await step("database", () => database.close());
        logger.info({ steps_ms: steps }, "service closed");
      },
    };
  } catch (err) {
    await Promise.all(changes.map((c) => c.close()));
    await database.close();
    throw err;
  }
}

/**
 * The LISTENs of an API process on a Postgres server: revocations reach the key cache, and run
 * changes wake the runs feed (which reads once a second without them). The embedded database has
 * no other process to hear from: none there.
 */
async function listenForChanges(
  config: Readonly<Config>,
  database: DatabaseHandle,
  api: { apiKeys: ApiKeyCache; runFeed?: RunFeed } | null,
  logger: Logger,
): Promise<ChannelListener[]> {
  const url = database.kind === "postgres" ? config.database.url : null;
  if (!api || !url) return [];
  const listeners = [await listenToChannel(url, API_KEY_CHANNEL, api.apiKeys, logger)];
  try {
    if (api.runFeed) listeners.push(await listenToChannel(url, RUN_CHANGES_CHANNEL, api.runFeed, logger));
  } catch (err) {
    await Promise.all(listeners.map((l) => l.close()));
    throw err;
  }
  return listeners;
}

/** The /v1 API's services, for a process that serves the API (CODEPLANE_COMPONENTS includes api). */
function apiServices(
  config: Readonly<Config>,
  database: DatabaseHandle,
  git: GitMirrors,
  kube: KubeClients | null,
  envVars: EnvVarService,
  box: SecretBox,
  installation: string,
  github: GitHubApp | null,
  metrics: Registry,
  objects: ObjectStore,
  logger: Logger,
): ApiServices & { background: { start(): void; stop(): Promise<void> }; apiKeys: ApiKeyCache } {
  const environments = new EnvironmentService({
    store: objects,
    catalog: config.environments.catalog,
    allowedRegistries: config.environments.allowedRegistries,
    maxArchiveBytes: config.environments.maxArchiveBytes,
    maxCacheBytes: config.environments.maxCacheBytes,
    logger: logger.child({ component: "environments" }),
  });
  let purging: { stop(): Promise<void> } | null = null;
  const outputs = new OutputService({ store: objects, limits: config.outputs, logger: logger.child({ component: "outputs" }) });
  let sweeping: { stop(): Promise<void> } | null = null;
  const analyses = new AnalysisService({
    git,
    launcher: kube ? new AnalysisResources(kube, installation) : null,
    timeoutSeconds: config.analyses.timeoutSeconds,
    environments: {
      catalog: config.environments.catalog,
      allowedRegistries: config.environments.allowedRegistries,
      defaultComputeType: DEFAULT_COMPUTE_TYPE,
    },
    logger: logger.child({ component: "analyses" }),
  });
  const runs = new RunService({
    git,
    experiments: analyses,
    launcher: kube ? new RunResources(kube, installation) : null,
    environments,
    runnerImage: config.runs.runnerImage,
    computeTypes: config.runs.computeTypes,
    defaultComputeType: DEFAULT_COMPUTE_TYPE,
    defaultTimeoutSeconds: config.runs.defaultTimeoutSeconds,
    maxTimeoutSeconds: config.runs.maxTimeoutSeconds,
    limits: config.runs.limits,
    // With Kueue configured its ClusterQueue's quotas apply, not the built-in limiter's caps.
    capsApply: !config.runs.kueue,
    logger: logger.child({ component: "runs" }),
  });
  const logHub = (table: WorkloadTable, label: string, component: string, setup?: SetupOptions, extra?: StateExtra) =>
    new LogHub({
      store: pgLogStore(database.db, table, extra),
      live: kube ? kubeLiveLogSource(kube, logger.child({ component: "live-logs" }), label) : null,
      logger: logger.child({ component }),
      ...(setup && { setup }),
    });
  // A run's stream also carries the install of the environment it waits for: one follow per build, shared by the hub's streams.
  const runSetup: SetupOptions = {
    store: pgSetupStore(database.db),
    live: kube ? kubeSetupLogSource(kube, logger.child({ component: "setup-logs" }), ENVIRONMENT_LABEL) : null,
    phase: SETUP_PHASE,
  };
  const repositories = new RepositoryService({ git, allowLocal: config.repositories.allowLocal, logger });
  const notify = notifications(config, database, box, runs, analyses, logger);
  const hooks = githubWebhooks(config, database, analyses, github, metrics, logger);
  // Keys in use are cached while the api_keys_changed LISTEN is in place (startService starts it).
  const apiKeys = new ApiKeyCache(database.db);
  const oauth = new OAuthServer({
    db: database.db,
    publicUrl: config.publicUrl,
    config: config.oauth,
    encryptionKey: config.encryption.keys[config.encryption.currentId]!,
    logger,
  });
  return {
    oauth,
    // The dashboard (/ui) signs in into the OAuth server's sessions.
    dashboard: new DashboardSessions({
      db: database.db,
      sessionSeconds: config.oauth.sessionSeconds,
      encryptionKey: config.encryption.keys[config.encryption.currentId]!,
      logger,
    }),
    background: {
      // Deleted and evicted environments' archives are purged on a schedule too, not only when a build ends.
      start() {
        hooks.background.start();
        notify.worker.start();
        purging = environments.startPurging(database.db);
        // Outputs of runs deleted by any path, and those past the retention.
        sweeping = outputs.startSweeping(database.db);
      },
      async stop() {
        await Promise.all([hooks.background.stop(), notify.worker.stop(), purging?.stop(), sweeping?.stop()]);
      },
    },
    apiKeys,
    webhooks: hooks.service,
    notifications: notify.service,
    db: database.db,
    // API keys, then OAuth access tokens (audience-checked against the request's base URL).
    authenticators: [(token) => apiKeys.authenticate(token), oauth.authenticator],
    repositories,
    envVars,
    runs,
    environments,
    outputs,
    // Warm pools' pods take their assignments through the internal door (nothing answers a credential no pool pod holds).
    pools: new PoolService(box),
    logHub: logHub(RUN_TABLE, RUN_LABEL, "log-hub", runSetup, RUN_STREAM_TIMELINE),
    runFeed: new RunFeed({
      db: database.db,
      logger: logger.child({ component: "run-feed" }),
      maxStreamsPerAccount: config.runEvents.streamsPerAccount,
    }),
    analyses,
    analysisLogHub: logHub(ANALYSIS_TABLE, ANALYSIS_LABEL, "analysis-log-hub"),
    checkout: new CheckoutService({ db: database.db, source: git.checkouts }),
    integrations: new IntegrationService({
      github,
      missing: config.githubMissing,
      publicUrl: config.publicUrl,
      states: new InstallStateSigner(config.encryption),
      repositories,
      logger: logger.child({ component: "integrations" }),
    }),
  };
}

/**
 * Notifications: the endpoints' service and the worker that sends the queued
 * deliveries. Every API replica runs the worker; claims in Postgres keep two
 * from sending one delivery at once. The body shows the run or analysis as
 * the API does (null when it was deleted before the first attempt).
 */
function notifications(config: Readonly<Config>, database: DatabaseHandle, box: SecretBox, runs: RunService, analyses: AnalysisService, logger: Logger) {
  const n = config.notifications;
  const gone = (err: unknown) => {
    if (err instanceof DomainError && err.kind === "not_found") return null;
    throw err;
  };
  const worker = new NotificationWorker({
    db: database.db,
    logger: logger.child({ component: "notifications" }),
    box,
    render: (kind, accountId, id) => (kind === "run" ? runs.get(database.db, accountId, id) : analyses.getById(database.db, accountId, id)).catch(gone),
    concurrency: n.concurrency,
    timeoutMs: n.timeoutMs,
    maxResponseBytes: n.maxResponseBytes,
    allowLocal: config.repositories.allowLocal,
    backoff: { baseSeconds: n.retryBaseSeconds, maxDelaySeconds: n.retryMaxDelaySeconds, jitter: 0.2 },
    retryWindowSeconds: n.retryWindowSeconds,
    retentionDays: n.retentionDays,
  });
  const service = new NotificationService({
    box,
    allowLocal: config.repositories.allowLocal,
    maxEndpointsPerAccount: n.maxEndpointsPerAccount,
    wake: () => worker.wake(),
  });
  return { service, worker };
}

/**
 * GitHub webhooks: the intake (an API route), the worker that handles the
 * queued deliveries and the syncer that reports analyses and runs as check
 * runs (src/domain/webhooks/check-run-syncer.ts). Every
 * API replica runs the worker and the syncer; the queue's leases keep them
 * from doing anything twice.
 */
function githubWebhooks(
  config: Readonly<Config>,
  database: DatabaseHandle,
  analyses: AnalysisService,
  github: GitHubApp | null,
  metrics: Registry,
  logger: Logger,
) {
  const count = webhookMetrics(metrics);
  const log = logger.child({ component: "webhooks" });
  const syncer = github
    ? new CheckRunSyncer({
        db: database.db,
        logger: logger.child({ component: "check-runs" }),
        api: githubCheckRuns(github),
        leaseSeconds: config.webhookLeaseSeconds,
        // The dashboard's views are hashes (src/ui/app/main.ts): the server serves /ui/ for all of them.
        sources: [
          analysisCheckRuns((a) => `${config.publicUrl}/ui/#/repos/${a.repository_id}/analysis/${a.commit_hash}`),
          runCheckRuns((id) => `${config.publicUrl}/ui/#/runs/${id}`),
        ],
        count: count.checkRun,
      })
    : null;
  const worker = new DeliveryWorker({
    db: database.db,
    logger: log,
    leaseSeconds: config.webhookLeaseSeconds,
    count: count.delivery,
    handle: (row) =>
      handleDelivery(
        {
          db: database.db,
          logger: log,
          startAnalysis: (db, accountId, repositoryId, ref, input, trigger) => analyses.create(db, accountId, repositoryId, ref, input, trigger),
          trackCheckRun: async (t) => {
            await trackCheckRun(database.db, t);
            syncer?.wake();
          },
          installations: installationSync(database.db),
        },
        row,
      ),
  });
  const secrets = config.github ? { current: config.github.webhookSecret, old: config.github.oldWebhookSecrets } : null;
  const service = new WebhookService({
    secrets,
    missingSettings: config.githubMissing,
    onQueued: () => worker.wake(),
    count: count.delivery,
    maxDepth: config.webhookIntake.maxDepth,
  });
  return {
    service,
    background: {
      start() {
        if (!github) return;
        worker.start();
        syncer?.start();
      },
      async stop() {
        await Promise.all([worker.stop(), syncer?.stop()]);
      },
    },
  };
}

/**
 * A seeded key (Helm, from a Secret) is made to work on every start. With the
 * embedded database and nothing in it, a first key is written to the data
 * folder, so a newcomer can call the API without any set-up.
 */
async function bootstrapCredentials(config: Readonly<Config>, database: DatabaseHandle, logger: Logger): Promise<void> {
  if (config.bootstrap.apiKey) {
    const { created } = await ensureSeededKey(database.db, config.bootstrap.account, config.bootstrap.apiKey);
    if (created) logger.info({ account: config.bootstrap.account }, "seeded API key from CODEPLANE_BOOTSTRAP_API_KEY");
    return;
  }
  if (database.kind !== "embedded") return;
  const key = await createFirstKeyIfEmpty(database.db, config.bootstrap.account);
  if (!key) return;
  const file = path.join(config.dataDir, "first-api-key");
  await writeFile(file, key + "\n", { mode: 0o600 });
  logger.info({ account: config.bootstrap.account, file }, "created the first account and wrote an API key for it");
}

export const NO_KUBERNETES = "no cluster configured: set KUBECONFIG, or run in a cluster";

/** Kubernetes clients, or null when this process has no cluster (the rest of the API still serves). */
export function connectKubernetes(config: Readonly<Config>, logger: Logger): KubeClients | null {
  if (!config.kubernetes.kubeconfig && !existsSync(IN_CLUSTER_TOKEN)) {
    logger.warn("no Kubernetes cluster configured (KUBECONFIG unset, not in a cluster): runs and analyses answer 503");
    return null;
  }
  try {
    return createKubeClients(config.kubernetes);
  } catch (err) {
    logger.error({ err }, "could not load the Kubernetes configuration: runs and analyses answer 503");
    return null;
  }
}

async function pingKubernetes(kube: KubeClients): Promise<void> {
  await kube.custom.listNamespacedCustomObject({ group: GROUP, version: CRD_VERSION, namespace: kube.namespace, plural: RUN_PLURAL, limit: 1 });
}

function startController(
  config: Readonly<Config>,
  kube: KubeClients,
  database: DatabaseHandle,
  envVars: EnvVarService,
  box: SecretBox,
  installation: string,
  metrics: Registry,
  internalUrl: string | null,
  outputs: OutputService | null,
  logger: Logger,
): LeaderElector {
  const controller = new Controller({
    k: kube,
    db: database.db,
    envVars,
    images: {
      runner: config.runs.runnerImage,
      codeplane: config.runs.codeplaneImage,
      pullPolicy: config.runs.imagePullPolicy,
      pullSecrets: config.runs.imagePullSecrets,
    },
    computeTypes: config.runs.computeTypes,
    jobTtlSeconds: config.runs.jobTtlSeconds,
    environmentBuildTimeoutSeconds: config.environments.buildTimeoutSeconds,
    environmentImages: { catalog: config.environments.catalog, allowedRegistries: config.environments.allowedRegistries },
    logMaxBytes: config.runs.logMaxBytes,
    metricLimits: config.runs.metrics,
    analysisComputeType: config.analyses.computeType,
    installation,
    retentionSeconds: config.kubernetes.resourceRetentionSeconds,
    metrics,
    checkout: { internalUrl, egress: config.runs.egress.mode, preprocessEnv: config.runs.preprocessEnv },
    limits: config.runs.limits,
    kueue: config.runs.kueue,
    outputCollectSeconds: config.runs.outputCollectSeconds,
    // A retried run's lost attempt's output files go with their rows when this process has the object store.
    discardOutputs: outputs ? (db, runId) => outputs.deleteForRun(db, runId) : discardOutputRows,
    warmPools: config.runs.warmPools,
    box,
    logger,
  });
  const elector = new LeaderElector({
    api: kube.coordination,
    namespace: kube.namespace,
    // One leader per installation: two installations in one namespace each reconcile their own resources.
    name: `codeplane-controller-${installation}`,
    identity: `${hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`,
    leaseSeconds: config.kubernetes.leaderLeaseSeconds,
    logger: logger.child({ component: "leader-election" }),
    onStartedLeading: () => controller.start(),
    onStoppedLeading: () => controller.stop(),
  });
  elector.start();
  return elector;
}
