// What each setting of config.ts's envSchema means, for people: one line of
// Markdown per variable. docs/operators/configuration.md is generated from this
// table, the schema's own defaults and the Helm chart (src/config-doc.ts,
// `npm run docs:config`); src/config-doc.test.ts fails when a variable has no
// line here, a line names no variable, or the page is stale. Data only.

export interface SettingDoc {
  /** What the setting does: one line of Markdown. */
  meaning: string;
  /** The default in words, only for a setting whose schema has none (unset, derived, generated). */
  default?: string;
  /** Said after the schema's default, e.g. "(7 days)". */
  defaultNote?: string;
  /** The chart's value that sets it, for the variables the chart computes itself (not `config.<NAME>`). */
  helm?: string;
  /** The chart's value naming the Secret (envFrom) that carries it. */
  helmSecret?: string;
  /** Why the chart does not set it at all. */
  helmNone?: string;
  /** What the chart sets it to from the release itself, no value (Markdown). */
  helmComputed?: string;
}

export const CONFIG_REFERENCE: Readonly<Record<string, SettingDoc>> = {
  DATABASE_URL: {
    meaning: "Postgres connection string. Unset: embedded PGlite under `CODEPLANE_DATA_DIR` (development only; one process at a time)",
    default: "unset",
    helmSecret: "database.existingSecret",
  },
  CODEPLANE_DATA_DIR: { meaning: "embedded database, generated development key, git mirror cache, the directory object store" },
  PORT: { meaning: "HTTP port" },
  CODEPLANE_HOST: { meaning: "listen address" },
  CODEPLANE_LOG_LEVEL: { meaning: "`fatal`, `error`, `warn`, `info`, `debug`, `trace`, `silent`" },
  CODEPLANE_ENCRYPTION_KEY: {
    meaning: "base64 of 32 bytes that encrypts stored secrets; required with `DATABASE_URL` (keep it: it decrypts them)",
    default: "generated into the data dir when embedded",
    helmSecret: "encryption.existingSecret",
  },
  CODEPLANE_ENCRYPTION_KEY_ID: { meaning: "name of the current key, stored beside every ciphertext", helmSecret: "encryption.existingSecret" },
  CODEPLANE_ENCRYPTION_OLD_KEYS: {
    meaning: "`id:base64key,...` kept for decryption during a rotation (then `codeplane secrets reencrypt`)",
    helmSecret: "encryption.existingSecret",
  },
  CODEPLANE_MIGRATE_ON_START: { meaning: "run migrations when `serve` (and the CLI) start", helm: "database.migrateOnStart" },
  CODEPLANE_ALLOW_LOCAL_REPOSITORIES: {
    meaning: "allow `file://`, local paths, `http://`, `git://` and loopback/private addresses as clone URLs (development and tests)",
  },
  CODEPLANE_BODY_LIMIT_BYTES: { meaning: "largest accepted JSON body (larger: `413`)" },
  CODEPLANE_RATE_LIMIT_REQUESTS: { meaning: "requests per window per credential (per client address before authentication); `0` disables" },
  CODEPLANE_RATE_LIMIT_WINDOW_SECONDS: { meaning: "rate-limit window" },
  CODEPLANE_AUTH_FAILURE_LIMIT: {
    meaning: "failed authentications per client address per window; beyond it that address's credentials get `429` before any lookup; `0` disables",
  },
  CODEPLANE_MCP_MAX_BATCH_MESSAGES: {
    meaning: "JSON-RPC messages in one `POST /mcp` batch (more: `422`); each message costs one rate-limit point, charged before any runs",
  },
  CODEPLANE_MCP_MAX_WAITS_PER_KEY: {
    meaning:
      "MCP tool calls per credential (per process) that may hold a `wait_seconds` wait at once; a call beyond it answers at once with the current state; `0`: no call waits",
  },
  CODEPLANE_MCP_MAX_RESULT_BYTES: {
    meaning:
      "largest MCP tool result (its JSON); `list_files` returns a shorter page with `truncated: true` and a `next_cursor`, `read_file` a shorter piece with its `next_offset`, `get_run_logs` fewer lines, another tool a tool error naming the limit",
  },
  CODEPLANE_RUN_EVENT_STREAMS_PER_ACCOUNT: {
    meaning:
      "`GET /v1/runs/events` streams one account may hold open on one API process (each holds a connection and a place in the process's fan-out of changes); the next is `429` with `Retry-After`",
  },
  CODEPLANE_DB_POOL_MAX: { meaning: "Postgres connections per process" },
  CODEPLANE_DB_PREPARED_STATEMENTS: {
    meaning:
      "prepare the hottest statements once per connection (the repository list); `false` sends every statement unnamed, for a pooler in transaction mode without protocol-level prepared statements (PgBouncer before 1.21, or `max_prepared_statements = 0`)",
  },
  CODEPLANE_GIT_CACHE_DIR: { meaning: "bare mirrors of registered repositories", default: "`$CODEPLANE_DATA_DIR/git`" },
  CODEPLANE_GIT_REFRESH_SECONDS: { meaning: "a mirror older than this is fetched again before it is read" },
  CODEPLANE_GIT_TIMEOUT_SECONDS: { meaning: "limit for one git command (clone, fetch, read)" },
  CODEPLANE_GIT_MAX_FETCHES: { meaning: "clones and fetches running at once, all accounts together" },
  CODEPLANE_GIT_MAX_FETCHES_PER_ACCOUNT: {
    meaning: "clones and fetches running at once for one account; at most `CODEPLANE_GIT_MAX_FETCHES`",
    default: "half of `CODEPLANE_GIT_MAX_FETCHES` (at least 1)",
  },
  CODEPLANE_GIT_QUEUE_WAIT_SECONDS: {
    meaning: "longest wait for a fetch slot; then `503` with `Retry-After` (a read with an older mirror is answered from it instead)",
  },
  CODEPLANE_MAX_FILE_BYTES: { meaning: "file contents beyond this are cut, with `truncated: true`" },
  CODEPLANE_SHUTDOWN_TIMEOUT_SECONDS: { meaning: "on SIGTERM, how long in-flight requests may finish" },
  CODEPLANE_IDLE_MEMORY_RELEASE_SECONDS: {
    meaning:
      "once traffic stops and the process has been quiet this long, it gives back the heap it grew under load if V8 has not already (one full collection, once per quiet period; see decision 0011); `0` never does",
  },
  CODEPLANE_TRUST_PROXY: {
    meaning:
      "trust `X-Forwarded-*` from one proxy in front: the client address (for rate limits) is the last `X-Forwarded-For` entry, the one that proxy added",
  },
  CODEPLANE_BOOTSTRAP_ACCOUNT: { meaning: "account for the seeded or first key", helm: "bootstrap.account" },
  CODEPLANE_BOOTSTRAP_API_KEY: {
    meaning: "a `cp_...` key (from `codeplane keys generate`) made to work for that account on every start",
    default: "unset",
    helmSecret: "bootstrap.existingSecret",
  },
  KUBECONFIG: {
    meaning: "cluster for runs and analyses; with neither it nor an in-cluster service account, run creation answers `503`",
    default: "unset (in-cluster)",
    helmNone: "the pods use their service account",
  },
  CODEPLANE_COMPONENTS: {
    meaning:
      "what this process runs: `api`, `controller` or both (the controller reconciles only while it holds the Lease). A process without `api` serves only `/healthz`, `/readyz` and `/metrics` on `PORT`",
  },
  CODEPLANE_RUNNER_IMAGE: { meaning: "image that runs user code (needs `sh`, `git` and `node`)", helm: "runnerImage.*" },
  CODEPLANE_IMAGE: { meaning: "codeplane's own image (copies the log-framing entrypoint into run pods; runs analyses)", helm: "image.*" },
  CODEPLANE_IMAGE_PULL_POLICY: { meaning: "pull policy of run and analysis pods", helm: "runnerImage.pullPolicy" },
  CODEPLANE_IMAGE_PULL_SECRETS: {
    meaning: "comma-separated names of Secrets, in `CODEPLANE_NAMESPACE`, that run and analysis pods pull their images with",
    helm: "imagePullSecrets",
  },
  CODEPLANE_JOB_TTL_SECONDS: { meaning: "finished Jobs (and pods) are deleted after this; logs stay in Postgres" },
  CODEPLANE_RESOURCE_RETENTION_SECONDS: {
    meaning:
      "finished Run and Analysis resources are deleted from the cluster this long after they finished; their rows, logs and results stay readable through the API",
    defaultNote: "(7 days)",
  },
  CODEPLANE_LEADER_LEASE_SECONDS: {
    meaning:
      "the controller's Lease: a holder that stops cleanly releases it; one that crashes or freezes is succeeded within this plus one second. The holder renews every fifth of it and stops reconciling after 70% of it without a renewal",
  },
  CODEPLANE_RUN_DEFAULT_TIMEOUT_SECONDS: { meaning: "a run's `timeout_seconds` when not given" },
  CODEPLANE_RUN_MAX_TIMEOUT_SECONDS: { meaning: "the largest `timeout_seconds` accepted" },
  CODEPLANE_LIMIT_EXECUTING_PER_ACCOUNT: {
    meaning:
      "runs and analyses one account may have executing at once (a run counts from its admission to its end); a run over it is created and waits, `pending` with `queue`. 0: no limit. Per account: `codeplane accounts limits` (docs/operators/limits.md)",
  },
  CODEPLANE_LIMIT_WAITING_PER_ACCOUNT: {
    meaning:
      "`pending` runs one account may have; a new run over it is refused with `429` and `Retry-After`. 0: no limit. Per account: `codeplane accounts limits`",
  },
  CODEPLANE_LIMIT_EXECUTING_TOTAL: {
    meaning:
      "runs and analyses executing at once in the whole installation; waiting runs are admitted round-robin across accounts, in order within one. 0: no limit",
  },
  CODEPLANE_LIMIT_CPU_PER_ACCOUNT: {
    meaning:
      "CPU one account's executing runs and analyses may request at once, a Kubernetes quantity (`8`, `500m`): a run whose compute type's requests would take the account over it waits, `pending` with `queue.reason` `AccountQuota`. 0: no cap. The built-in limiter's (with Kueue, the ClusterQueue's quotas). Per account: `codeplane accounts limits --cpu`",
  },
  CODEPLANE_LIMIT_MEMORY_PER_ACCOUNT: {
    meaning:
      "memory one account's executing runs and analyses may request at once, a Kubernetes quantity (`32Gi`); as `CODEPLANE_LIMIT_CPU_PER_ACCOUNT`. 0: no cap. Per account: `codeplane accounts limits --memory`",
  },
  CODEPLANE_LIMIT_RETRY_AFTER_SECONDS: { meaning: "the `Retry-After` a run refused over the waiting limit is sent" },
  CODEPLANE_KUEUE_CLUSTER_QUEUE: {
    meaning:
      "Kueue admits runs instead of the built-in executing limits when this names a ClusterQueue and the cluster serves Kueue's CRDs: each account gets a LocalQueue pointing at it, and runs' Jobs are created suspended in it. Empty: the built-in limiter ([limits](limits.md#kueue))",
    helm: "kueue.clusterQueue",
  },
  CODEPLANE_KUEUE_MAX_WAIT_SECONDS: {
    meaning:
      "with Kueue, how long a run may wait for admission: its checkout and output tokens, made with its suspended Job, are valid this much longer, and a run that waited longer fails with `QueueTimeout`",
    helm: "kueue.maxWaitSeconds",
  },
  CODEPLANE_RUN_OUTPUT_COLLECT_SECONDS: {
    meaning:
      "seconds a run's pod gets past its timeout (and after a cancellation) to send its output files: the runner stops the command at `timeout_seconds`, the Job's deadline is this much later, and it is the run pod's termination grace period ([storage](storage.md#run-outputs))",
  },
  CODEPLANE_OUTPUT_MAX_FILE_BYTES: {
    meaning: "largest single output file a run may store; a larger one is refused (`refused` in its outputs, a line on its stderr)",
  },
  CODEPLANE_OUTPUT_MAX_RUN_BYTES: { meaning: "bytes of output files one run may store together; the file that would pass it is refused whole" },
  CODEPLANE_OUTPUT_MAX_RUN_FILES: { meaning: "output files one run may store; further files are refused" },
  CODEPLANE_OUTPUT_MAX_ACCOUNT_BYTES: { meaning: "bytes of output files all of one account's runs may keep stored; a file that would pass it is refused" },
  CODEPLANE_OUTPUT_MAX_ACCOUNT_FILES: { meaning: "output files one account may keep stored" },
  CODEPLANE_OUTPUT_RETENTION_DAYS: { meaning: "days a run's output files are kept; `0`: as long as the run (deleting a run always deletes its outputs)" },
  CODEPLANE_LOG_MAX_BYTES: { meaning: "stored output per run and stream; beyond it lines are dropped and `truncated` is set" },
  CODEPLANE_RUN_METRICS_MAX_SERIES: { meaning: "metric series one run may report; points of further names are refused and counted in the metrics' `dropped`" },
  CODEPLANE_RUN_METRICS_MAX_POINTS: { meaning: "points one metric series may hold; later points are refused and counted in `dropped`" },
  CODEPLANE_RUN_METRICS_MAX_NAME_LENGTH: { meaning: "characters of a metric's name; a point with a longer name is refused and counted in `dropped`" },
  CODEPLANE_ANALYSIS_TIMEOUT_SECONDS: {
    meaning: "an analysis Job's deadline; the analyzer stops looking at about 80% of it and reports what it found (`repo_summary.truncated`)",
  },
  CODEPLANE_ANALYSIS_COMPUTE_TYPE: {
    meaning:
      "the compute preset (from `CODEPLANE_COMPUTE_TYPES`) analysis pods get; the chart's `cpu-small` (256Mi requested, 384Mi limit) fits the analyzer, which peaks under 256 MiB",
  },
  CODEPLANE_COMPUTE_TYPES: {
    meaning: "JSON `{name: {requests, limits, nodeSelector?, tolerations?, runtimeClassName?}}`; must define `cpu-general`",
    default: "the `cpu-general`, `cpu-memory` and `gpu-a10g` presets",
    helm: "computeTypes",
  },
  CODEPLANE_WARM_POOLS: {
    meaning:
      "warm pools (docs/operators/warm-pools.md): JSON `[{name, environment, compute_type?, size, idle_seconds?}]`; each keeps `size` pods started for runs of that cached environment's key and compute type, which start on one without a Job to create",
    default: "none",
    helm: "warmPools",
  },
  CODEPLANE_NAMESPACE: { meaning: "namespace of Runs, Analyses and their Jobs", helm: "runNamespace.name" },
  CODEPLANE_INTERNAL_URL: {
    meaning:
      "the URL run and analysis pods clone from (codeplane's `/git/`). Unset: `http://<CODEPLANE_GIT_HOST>:<git port>` when that host is one address pods can reach (not loopback, not `0.0.0.0`); otherwise runs and analyses fail at once saying it is missing. `codeplane install` needs an IP address here",
    default: "derived (the chart: the Service's git port)",
  },
  CODEPLANE_GIT_PORT: { meaning: "a second port serving only `/git/`, the one port of codeplane's that runs may reach (`0`: any free port)", default: "unset" },
  CODEPLANE_GIT_HOST: { meaning: "the address the git port listens on (`make dev`: the local cluster's node address)", default: "`CODEPLANE_HOST`" },
  CODEPLANE_METRICS_PORT: { meaning: "a port serving only `/metrics` (then not on `PORT`)", default: "unset" },
  CODEPLANE_GIT_MAX_UPLOADS: {
    meaning:
      "checkouts served at once (each `git upload-pack` builds a pack: CPU heavy); more wait up to `CODEPLANE_GIT_QUEUE_WAIT_SECONDS`, then `503`; an exchange that moves nothing for `CODEPLANE_GIT_TIMEOUT_SECONDS` is ended",
  },
  CODEPLANE_RUN_EGRESS: {
    meaning:
      "what runs may reach beyond DNS, git and the allowed rules: nothing (`restricted`) or the internet outside the cluster ranges (`open`); the metadata ranges never",
    helm: "runs.egress.mode",
  },
  CODEPLANE_RUN_EGRESS_ALLOW: {
    meaning: "destinations runs may reach in either mode: `CIDR` or `CIDR@PORT[-END][/tcp|/udp]`, comma-separated (Helm: a list of `{cidr, ports}`)",
    helm: "runs.egress.allow",
  },
  CODEPLANE_RUN_EGRESS_CLUSTER_CIDRS: {
    meaning: "closed to runs even with `open` egress; add your cluster's ranges if they are public addresses",
    helm: "runs.egress.clusterCIDRs",
  },
  CODEPLANE_RUN_EGRESS_POLICY: {
    meaning:
      "the workload NetworkPolicy every controller process applies in `CODEPLANE_NAMESPACE` at start, before it listens, built from these egress settings (the code of `codeplane install`; needs `create`, `get` and `update` on it). Unset: none (`codeplane install` applies `codeplane-workloads`)",
    default: "unset",
    helmComputed: "`<fullname>-workloads`",
  },
  CODEPLANE_RUN_EGRESS_GIT_PODS: {
    meaning:
      "the git endpoint as pods, `<namespace>/<label>=<value>,...`, reached on the git listener's port (a policy cannot name a DNS name). Unset: the address in `CODEPLANE_INTERNAL_URL`",
    default: "unset",
    helmComputed: "the release's API pods, `<release namespace>/<their labels>`",
  },
  CODEPLANE_GITHUB_APP_ID: {
    meaning:
      "the GitHub App's id. The App's settings (this, the private key, the webhook secret, the slug and `CODEPLANE_PUBLIC_URL`) are all set or none: with none the integration endpoints answer `503` naming them (`/readyz` does not care); with only some the process refuses to start, naming what is missing",
    default: "unset",
  },
  CODEPLANE_GITHUB_PRIVATE_KEY: {
    meaning: "the App's private key, the PEM GitHub downloads (line breaks may be written `\\n`); checked at start",
    default: "unset",
    helmSecret: "github.existingSecret",
  },
  CODEPLANE_GITHUB_PRIVATE_KEY_FILE: { meaning: "a file with that PEM instead (not both)", default: "unset" },
  CODEPLANE_GITHUB_WEBHOOK_SECRET: { meaning: "the App's webhook secret", default: "unset", helmSecret: "github.existingSecret" },
  CODEPLANE_GITHUB_WEBHOOK_OLD_SECRETS: {
    meaning: "comma-separated secrets still accepted on webhooks during a rotation",
    default: "empty",
    helmSecret: "github.existingSecret",
  },
  CODEPLANE_GITHUB_APP_SLUG: {
    meaning: "the App's slug (`https://github.com/apps/<slug>`): the install URL is built from it without asking GitHub",
    default: "unset",
  },
  CODEPLANE_GITHUB_API_URL: {
    meaning:
      "GitHub's REST API; Enterprise Server: `https://<host>/api/v3`. The web and git host is derived: `https://github.com` for the public API, `https://<name>.ghe.com` for `api.<name>.ghe.com`, the server's root otherwise",
    default: "`https://api.github.com`",
  },
  CODEPLANE_GITHUB_TIMEOUT_SECONDS: { meaning: "limit for one call to GitHub's API (a GitHub that does not answer fails the request, never holds it)" },
  CODEPLANE_WEBHOOK_LEASE_SECONDS: {
    meaning:
      "how long a replica holds a webhook delivery or check-run update it is handling before another may take it over; renewed while it works, so it is how long a crashed replica's work waits",
  },
  CODEPLANE_WEBHOOK_MAX_BODY_BYTES: {
    meaning:
      "largest GitHub webhook body (GitHub's own cap is 25 MB); a larger `Content-Length` is `413` before any of the body is read, and one without `Content-Length` is `411`",
    defaultNote: "(25 MiB)",
  },
  CODEPLANE_WEBHOOK_MAX_INFLIGHT_BYTES: {
    meaning:
      "webhook body bytes this process reads and holds at once, reserved from each delivery's `Content-Length` before reading; beyond it `503` with `Retry-After`. At least `CODEPLANE_WEBHOOK_MAX_BODY_BYTES`; parsing a held body takes a few times its size in heap",
    defaultNote: "(64 MiB)",
  },
  CODEPLANE_WEBHOOK_READ_TIMEOUT_SECONDS: {
    meaning: "a webhook body must arrive within this (GitHub itself waits 10 s for the answer); a slower sender gets `408` and its connection is closed",
  },
  CODEPLANE_WEBHOOK_RATE_LIMIT_REQUESTS: {
    meaning:
      "webhook deliveries per client address and `CODEPLANE_RATE_LIMIT_WINDOW_SECONDS` window; then `429` with `Retry-After` (GitHub does not redeliver by itself); `0` disables. Forged signatures also spend the address's `CODEPLANE_AUTH_FAILURE_LIMIT`",
  },
  CODEPLANE_WEBHOOK_MAX_DEPTH: {
    meaning: "a signed webhook body whose JSON nests deeper than this is refused with `400` (shown as failed on GitHub, never lost silently); at most 1000",
  },
  CODEPLANE_NOTIFICATIONS_MAX_ENDPOINTS: {
    meaning: "notification endpoints (webhooks) one account may register; one more is `409`",
  },
  CODEPLANE_NOTIFICATIONS_TIMEOUT_SECONDS: {
    meaning: "limit for one delivery attempt (connecting, sending and the answer); an endpoint that has not answered by then counts as failed and is retried",
  },
  CODEPLANE_NOTIFICATIONS_CONCURRENCY: {
    meaning: "delivery attempts in flight at once per process (every API replica sends; the queue in Postgres gives each delivery to one at a time)",
  },
  CODEPLANE_NOTIFICATIONS_MAX_RESPONSE_BYTES: {
    meaning: "bytes of an endpoint's answer read (the start of a failing answer is kept in the delivery's `error`); the rest is dropped with the connection",
  },
  CODEPLANE_NOTIFICATIONS_RETRY_HOURS: {
    meaning: "how long a failing delivery is retried, from its first attempt (or its redelivery); at least 24",
  },
  CODEPLANE_NOTIFICATIONS_RETRY_BASE_SECONDS: {
    meaning:
      "the delay before a delivery's second attempt; it doubles after each failed attempt up to `CODEPLANE_NOTIFICATIONS_RETRY_MAX_DELAY_SECONDS`, ±20% at random",
  },
  CODEPLANE_NOTIFICATIONS_RETRY_MAX_DELAY_SECONDS: { meaning: "the longest delay between two attempts of a delivery", defaultNote: "(1 hour)" },
  CODEPLANE_NOTIFICATIONS_RETENTION_DAYS: {
    meaning: "delivered and failed deliveries are listed this long, then removed (queued ones never are)",
  },
  CODEPLANE_PUBLIC_URL: {
    meaning:
      "the base URL people and GitHub reach the API at (`https://codeplane.example.com`): the GitHub App's setup and webhook URLs derive from it, the setup callback redirects under it, check runs link to it; it is the OAuth issuer and the audience of access tokens (unset: derived from each request). Required with the GitHub App; set it in production",
    default: "unset",
  },
  CODEPLANE_OAUTH_ACCESS_TOKEN_SECONDS: { meaning: "lifetime of OAuth access tokens (60 to 86400)" },
  CODEPLANE_OAUTH_REFRESH_TOKEN_SECONDS: {
    meaning: "lifetime of a refresh token; each use rotates it and the new one gets a fresh lifetime",
    defaultNote: "(30 days)",
  },
  CODEPLANE_SESSION_SECONDS: {
    meaning: "lifetime of a sign-in session (the authorization page's cookie, which the dashboard reuses)",
    defaultNote: "(12 h)",
  },
  CODEPLANE_OAUTH_RATE_LIMIT_REQUESTS: {
    meaning:
      "requests per client address and `CODEPLANE_RATE_LIMIT_WINDOW_SECONDS` window on `/oauth/token`, on `/oauth/register`, on sign-in attempts, on `/oauth/revoke` and `/oauth/introspect`, and on `/oauth/authorize` with a client ID metadata document `client_id`, each; then `429` with `Retry-After`; `0` disables",
  },
  CODEPLANE_OAUTH_ALLOW_LOCAL_CLIENT_METADATA: {
    meaning: "client ID metadata documents may be `http://` URLs and on loopback or private addresses (development and tests only)",
  },
  CODEPLANE_OAUTH_CLIENT_METADATA_MAX_FETCHES: {
    meaning:
      "client ID metadata document fetches running at once per process (requests for the same URL share one fetch); beyond it the request is refused with `503` `temporarily_unavailable` and `Retry-After`",
  },
  CODEPLANE_OAUTH_CLIENT_METADATA_FAILURE_SECONDS: {
    meaning:
      "a client ID metadata document that could not be fetched or was invalid is answered from memory this long before its URL is fetched again; `0` disables",
  },
  CODEPLANE_OAUTH_CLIENT_METADATA_UNUSED_DAYS: {
    meaning:
      "a client ID metadata document client that no grant names and that was not fetched for this many days is deleted (checked at most hourly, when a document is stored)",
  },
  CODEPLANE_OIDC_ISSUER: {
    meaning:
      "issuer URL of the OpenID Connect provider people sign in with (`https`; `http` only on loopback). With `CODEPLANE_OIDC_CLIENT_ID` and `CODEPLANE_OIDC_CLIENT_SECRET`: all three or none",
    default: "unset",
  },
  CODEPLANE_OIDC_CLIENT_ID: { meaning: "codeplane's client id at the provider (redirect URI `{base_url}/oauth/oidc/callback`)", default: "unset" },
  CODEPLANE_OIDC_CLIENT_SECRET: { meaning: "its client secret (`client_secret_basic`)", default: "unset", helmSecret: "oidc.existingSecret" },
  CODEPLANE_OIDC_PROVIDER_NAME: { meaning: 'shown on the button: "Sign in with ..."', default: "the issuer's host" },
  CODEPLANE_OIDC_ACCOUNT_CLAIM: {
    meaning:
      "the ID-token claim that names the account: `email` (the domain of a verified address) or another claim (its value, or each entry of a list, e.g. `groups`)",
  },
  CODEPLANE_OIDC_ACCOUNTS: {
    meaning: "`value=account,...`, first match wins (e.g. `acme.com=acme`); unset: the claim's value is the account's name. Sign-in never creates an account",
    default: "unset",
  },
  CODEPLANE_OIDC_SCOPES: {
    meaning: "the scopes a session signed in through the provider carries (space- or comma-separated)",
    default: "every scope but `keys:write`",
  },
  CODEPLANE_OIDC_UPSTREAM_SCOPES: {
    meaning: "the scopes asked of the provider",
    default: "`openid email`, plus `groups` for that claim (`profile` for another)",
  },
  CODEPLANE_OIDC_API_KEY_SIGN_IN: { meaning: "the sign-in page also offers the API-key form; `false` (only with OIDC configured): the provider alone" },
  CODEPLANE_ENVIRONMENT_IMAGES: {
    meaning:
      'JSON catalog of environment images: `[{"image", "toolchains": {"python": "3.11", ...}, "packages": ["torch"], "presets": ["gpu"]}]`; a run gets the image that fits its commit\'s toolchains on its compute type (docs/operators/environments.md)',
    default: "unset or `[]`: the runner image alone, as Python 3.11 and Node 24",
    helm: "environments.images",
  },
  CODEPLANE_ENVIRONMENT_ALLOWED_REGISTRIES: {
    meaning:
      "registry prefixes (comma-separated, e.g. `ghcr.io/acme,docker.io/library`) whose images a repository may declare for itself in `.devcontainer/devcontainer.json`, matched on whole path segments (`ghcr.io/acme` allows `ghcr.io/acme/x:1`, not `ghcr.io/acme-evil/x`); empty: repository images are never used, the catalog's always are (docs/operators/environments.md)",
    defaultNote: "(repository images never used)",
    helm: "environments.allowedRegistries",
  },
  CODEPLANE_ENVIRONMENT_BUILD_TIMEOUT_SECONDS: { meaning: "an environment build's time budget (checkout and install), apart from the runs' own timeouts" },
  CODEPLANE_ENVIRONMENT_MAX_BYTES: { meaning: "largest environment archive one build may store; a larger one fails the build with `413`" },
  CODEPLANE_ENVIRONMENT_CACHE_MAX_BYTES: { meaning: "bound on all stored environment archives together; the least recently used are dropped beyond it" },
  CODEPLANE_ENVIRONMENT_UPLOAD_TIMEOUT_SECONDS: {
    meaning:
      "how long one environment archive upload (a build's save, over the internal door) may take to arrive whole; every other request keeps the server's 300 s. A slower upload is cut with `408` and the build fails",
  },
  CODEPLANE_RUN_PREPROCESS_ENV: {
    meaning:
      "JSON of non-secret variables the checkout and environment builds get: a package mirror's (`PIP_INDEX_URL`, `NPM_CONFIG_REGISTRY`, `GOPROXY`, ...; [environments](environments.md#package-mirror))",
    default: "`{}`",
    helm: "runs.preprocessEnv",
  },
  CODEPLANE_OBJECT_STORE: {
    meaning:
      "where environment archives (and run outputs) are kept: `directory` (a folder of this process: one replica, or a volume all replicas share) or `s3` (an S3-compatible bucket); only the server holds it, pods never do. See [Object storage](storage.md)",
  },
  CODEPLANE_OBJECT_STORE_DIR: { meaning: "the `directory` store's folder", default: "`$CODEPLANE_DATA_DIR/objects`" },
  CODEPLANE_S3_ENDPOINT: {
    meaning: "URL of an S3-compatible service (MinIO, Ceph RGW, R2, versitygw, ...); only with `CODEPLANE_OBJECT_STORE=s3`",
    default: "unset: AWS S3 in `CODEPLANE_S3_REGION`",
  },
  CODEPLANE_S3_BUCKET: { meaning: "the bucket; required with `CODEPLANE_OBJECT_STORE=s3`, which checks at start that it is reachable", default: "unset" },
  CODEPLANE_S3_REGION: { meaning: "the bucket's region (most S3-compatible servers take any)" },
  CODEPLANE_S3_FORCE_PATH_STYLE: {
    meaning:
      "address the bucket in the path (`http://host/bucket/key`) instead of a host name (`http://bucket.host/key`): most S3-compatible servers need `true`",
  },
  CODEPLANE_S3_ACCESS_KEY_ID: {
    meaning:
      "access key for the bucket, with `CODEPLANE_S3_SECRET_ACCESS_KEY` (both or neither; neither: the AWS SDK's default chain, e.g. `AWS_*` variables or the pod's workload identity)",
    default: "unset",
    helmSecret: "objectStore.existingSecret",
  },
  CODEPLANE_S3_SECRET_ACCESS_KEY: { meaning: "its secret key (never logged)", default: "unset", helmSecret: "objectStore.existingSecret" },
};
