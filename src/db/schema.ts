import type { ColumnType, Generated, Insertable, Selectable, Updateable } from "kysely";
import type { AnalyzerResult } from "@codeplane/analyzer";

// Kysely's view of the tables created by src/db/migrations. Timestamps are
// written as Date and read back as Date (pg and PGlite both parse timestamptz).

type CreatedAt = ColumnType<Date, Date | undefined, never>;
type Timestamp = ColumnType<Date, Date, Date>;

/** What a warm pod's agent measured before its command started (pool_pods.diagnostics; checked by domain/pools/agent-diagnostics.ts). */
export interface AgentDiagnostics {
  /** Milliseconds from the assignment's arrival to the end of each sub-step, by name. */
  steps_ms: Record<string, number>;
  /** What the steps said (the environment restore's lines), oldest first. */
  notes: string[];
}

export interface AccountsTable {
  id: string;
  name: string;
  created_at: CreatedAt;
}

export interface ApiKeysTable {
  id: string;
  account_id: string;
  name: string;
  prefix: string;
  key_hash: string;
  scopes: string[];
  created_at: CreatedAt;
  expires_at: Date | null;
  last_used_at: Date | null;
  revoked_at: Date | null;
  /** The key this one was minted through (POST /v1/auth/keys); null for keys made by the CLI or the bootstrap. Revoked with it. */
  parent_id: ColumnType<string | null, string | null | undefined, never>;
}

export interface RepositoriesTable {
  id: string;
  account_id: string;
  name: string;
  url: string;
  provider: "git" | "github";
  default_branch: string | null;
  integration_id: string | null;
  auto_analyze: Generated<boolean>;
  /** GitHub's id of the repository (int8, read as a string), for repositories registered through an integration; kept after it is disconnected. */
  github_repository_id: ColumnType<string | null, number | string | null | undefined, number | string | null>;
  /** Each run created while this is on reports a check run on GitHub (migration 0025). */
  report_check_runs: Generated<boolean>;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface IntegrationsTable {
  id: string;
  account_id: string;
  provider: "github";
  /** GitHub's installation id (int8, read as a string). Unique among live rows. */
  installation_id: ColumnType<string, number | string, never>;
  account_login: string;
  account_type: string;
  repository_selection: string;
  suspended: Generated<boolean>;
  created_at: CreatedAt;
  updated_at: Timestamp;
  /** Disconnected through the API or the installation was deleted on GitHub. */
  deleted_at: Date | null;
}

export interface EnvironmentVariablesTable {
  id: string;
  account_id: string;
  repository_id: string | null;
  name: string;
  secret: boolean;
  key_id: string;
  value_ciphertext: Buffer;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface RunsTable {
  id: string;
  account_id: string;
  repository_id: string;
  commit_hash: string;
  workflow_id: string;
  status: "pending" | "preprocessing" | "running" | "completed" | "failed" | "cancelled";
  status_rank: Generated<number>;
  experiment_id: string | null;
  compute_type: string;
  run_config: ColumnType<RunConfig, string, string>;
  exit_code: number | null;
  error: string | null;
  logs_complete: Generated<boolean>;
  // int8 comes back from pg as a string; these are read through Number().
  stdout_bytes: ColumnType<string, number | undefined, number>;
  stderr_bytes: ColumnType<string, number | undefined, number>;
  stdout_truncated: Generated<boolean>;
  stderr_truncated: Generated<boolean>;
  deleted_at: Date | null;
  /** When the Run resource left the cluster other than through the API (kubectl delete, retention). */
  resource_deleted_at: Date | null;
  start_time: Date | null;
  close_time: Date | null;
  /** The environment the run was given (null: none, or a run older than environments). */
  environment: ColumnType<RunEnvironment | null, string | null | undefined, string | null>;
  /** Start-up steps the cluster recorded, mirrored from the Run's status (migration 0014). */
  timeline: ColumnType<RunTimelineMarksRow | null, string | null | undefined, string | null>;
  /** When the first line of output was stored (the log archiver's). */
  first_output_at: Date | null;
  /** Each metric series' final value (migration 0017; src/domain/runs/run-metrics.ts writes it). */
  final_metrics: ColumnType<Record<string, number>, string | undefined, string>;
  /** Metric points refused by the bounds (too many series or points, a name too long). */
  metrics_dropped: Generated<number>;
  /** The highest log frame seq whose metrics were taken (int8, read through Number()). */
  metrics_seq: ColumnType<string, number | undefined, number>;
  /** The run this one repeats (POST /v1/runs/{run_id}/rerun). */
  rerun_of: ColumnType<string | null, string | null | undefined, string | null>;
  /** Why the run waits for admission (its Run's status.queue.reason, migration 0019); null: not queued. */
  queue_reason: Generated<string | null>;
  /** The run's attempts, mirrored from the Run's status.attempts (migration 0024); null: none recorded yet. */
  attempts: ColumnType<RunAttemptRow[] | null, string | null | undefined, string | null>;
  /** The transaction that last changed what the API shows of the run (migration 0026, set by a trigger): the run feed's position. xid8, read as text. */
  change_xid: ColumnType<string | null, never, never>;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface RunMetricSeriesTable {
  run_id: string;
  name: string;
  points: number;
  // int8: read through Number().
  last_step: ColumnType<string, number, number>;
  last_value: number;
}

export interface RunMetricPointsTable {
  run_id: string;
  /** Where the point came from: `<frame seq>` for a printed line, `<frame seq>.<n>` for a record of the metrics file. */
  source: string;
  name: string;
  step: ColumnType<string, number, number>;
  value: number;
  ts: Date;
}

export interface RunIdempotencyKeysTable {
  account_id: string;
  key: string;
  fingerprint: string;
  claim: string;
  run_id: string | null;
  claimed_at: ColumnType<Date, Date | undefined, Date>;
  expires_at: Date;
}

/** An account's overrides of the operator's default limits (migration 0019); null: the default. */
export interface AccountLimitsTable {
  account_id: string;
  executing: number | null;
  waiting: number | null;
  /** bigint: pg returns it as a string (0027). */
  cpu_millis: ColumnType<string | null, number | null | undefined, number | null>;
  memory_bytes: ColumnType<string | null, number | null | undefined, number | null>;
  updated_at: Generated<Date>;
}

/** The Run status's timeline marks (src/resources/run.ts runTimelineMarksSchema), ISO times. */
export interface RunTimelineMarksRow {
  admitted?: string;
  scheduled?: string;
  imageReady?: string;
  checkedOut?: string;
  environmentReady?: string;
  /** The run started on a warm pool's pod (issue 33). */
  warm?: boolean;
  pool?: string;
}

/** What a run records of its environment. */
export interface RunEnvironment {
  /** null: nothing to install, the image alone is the environment. */
  key: string | null;
  image: string;
  /** "hit": restored from the cache; "built": this run waited for the build. */
  cache?: "hit" | "built";
  warnings: string[];
}

export interface EnvironmentsTable {
  id: string;
  account_id: string;
  repository_id: string | null;
  commit_hash: string;
  key: string;
  image: string;
  definition: ColumnType<EnvironmentDefinitionJson, string, string>;
  status: "building" | "ready" | "failed";
  error: string | null;
  log: string | null;
  size: ColumnType<string | null, number | null | undefined, number | null>;
  sha256: string | null;
  upload_token_hash: string | null;
  build_deadline: Date | null;
  created_at: CreatedAt;
  started_at: Date | null;
  completed_at: Date | null;
  last_used_at: Generated<Date>;
  deleted_at: Date | null;
}

/** A run's hold on the stored environment it was promised, until it is past its restore (0015). */
export interface EnvironmentPinsTable {
  environment_id: string;
  run_id: string;
  created_at: CreatedAt;
}

/** A run's output file (migration 0018): stored whole (object_key, sha256 set) or refused (refused says why, nothing stored). */
export interface RunOutputsTable {
  run_id: string;
  account_id: string;
  path: string;
  object_key: string | null;
  size: ColumnType<string, number, number>;
  sha256: string | null;
  content_type: string | null;
  refused: string | null;
  stored_at: CreatedAt;
}

/** What a run's pod uploads its outputs with: a SHA-256 of the token, its run, until when. */
export interface OutputTokensTable {
  token_hash: string;
  run_id: string;
  account_id: string;
  expires_at: Date;
}

/** An environment's definition as the analysis resolved it (the analyzer's environment, snake_case). */
export interface EnvironmentDefinitionJson {
  toolchains: { name: string; version: string | null; exact: boolean; source: string }[];
  manifests: { path: string; sha256: string }[];
  steps: { name: string; run: string; why: string; ecosystem: string }[];
  cache_paths: string[];
  packages: string[];
  notes: string[];
  warnings: string[];
}

export interface RunConfig {
  command: string[];
  parameters: Record<string, string | number | boolean | null>;
  timeout_seconds: number;
  /** Attempts an infrastructure failure may add (absent in runs older than retries: 0). */
  retries?: number;
}

/** One attempt as the Run's status records it (src/resources/run.ts runAttemptSchema). */
export interface RunAttemptRow {
  attempt: number;
  jobName: string;
  createdAt: string;
  startTime?: string;
  completionTime?: string;
  reason?: string;
  message?: string;
  logSeqOffset: number;
}

export interface RunLogLinesTable {
  run_id: string;
  seq: ColumnType<string, number, never>;
  stream: "stdout" | "stderr";
  ts: Date;
  line: string;
}

/** One phase a workload went through (migration 0012); the analysis table has the same columns keyed by analysis_id. */
export interface RunTransitionsTable {
  run_id: string;
  seq: number;
  phase: string;
  at: Date;
  inferred: Generated<boolean>;
}

export interface AnalysisTransitionsTable extends Omit<RunTransitionsTable, "run_id"> {
  analysis_id: string;
}

export interface AnalysesTable {
  id: string;
  account_id: string;
  repository_id: string;
  commit_hash: string;
  branch: string | null;
  language: "en" | "ja";
  workflow_id: string;
  status: "pending" | "running" | "completed" | "failed" | "cancelled";
  status_rank: Generated<number>;
  exit_code: number | null;
  error: string | null;
  result: ColumnType<AnalyzerResult | null, string | null, string | null>;
  logs_complete: Generated<boolean>;
  stdout_bytes: ColumnType<string, number | undefined, number>;
  stderr_bytes: ColumnType<string, number | undefined, number>;
  stdout_truncated: Generated<boolean>;
  stderr_truncated: Generated<boolean>;
  deleted_at: Date | null;
  resource_deleted_at: Date | null;
  started_at: Date | null;
  completed_at: Date | null;
  /** What started it: the API, or a GitHub webhook delivery. */
  trigger: Generated<"api" | "push" | "pull_request">;
  trigger_delivery_id: string | null;
  /** When the first line of output was stored (the log archiver's). */
  first_output_at: Date | null;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface AnalysisLogLinesTable {
  analysis_id: string;
  seq: ColumnType<string, number, never>;
  stream: "stdout" | "stderr";
  ts: Date;
  line: string;
}

export interface InstallationTable {
  singleton: Generated<boolean>;
  id: Generated<string>;
  created_at: CreatedAt;
}

export interface CheckoutTokensTable {
  token_hash: string;
  workload_kind: "run" | "analysis" | "environment";
  workload_id: string;
  account_id: string;
  repository_id: string;
  commit_hash: string;
  created_at: CreatedAt;
  expires_at: Date;
}

export interface GitHubWebhookDeliveriesTable {
  /** X-GitHub-Delivery. */
  id: string;
  event: string;
  action: string | null;
  installation_id: ColumnType<string | null, number | null | undefined, never>;
  repository_full_name: string | null;
  status: "queued" | "processing" | "handled" | "skipped" | "failed";
  /** Why it was skipped, or its last error. */
  reason: string | null;
  attempts: Generated<number>;
  /** The body, until the delivery is finished. */
  payload: ColumnType<unknown, string | null, string | null>;
  /** When it may next be claimed: a lease while processing, a backoff after an error. */
  available_at: Generated<Date>;
  received_at: CreatedAt;
  finished_at: Date | null;
}

export interface GitHubCheckRunsTable {
  analysis_id: string;
  installation_id: ColumnType<string, number | string, never>;
  repository_full_name: string;
  head_sha: string;
  check_run_id: ColumnType<string | null, number | string | null | undefined, number | string | null>;
  /** The state GitHub was last told. */
  sent: "queued" | "in_progress" | "completed" | null;
  attempts: Generated<number>;
  available_at: Generated<Date>;
  last_error: string | null;
  abandoned: Generated<boolean>;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

/** The check run of a run of a repository with report_check_runs (migration 0025): github_check_runs' columns, keyed by run. */
export interface GitHubRunCheckRunsTable extends Omit<GitHubCheckRunsTable, "analysis_id"> {
  run_id: string;
}

/** OAuth clients: registered (RFC 7591) or fetched Client ID Metadata Documents (src/oauth/). */
export interface OAuthClientsTable {
  client_id: string;
  kind: "registered" | "metadata_document";
  /** The account (and API key) that registered it; null for anonymous registrations and metadata documents. */
  account_id: string | null;
  api_key_id: string | null;
  client_name: string;
  redirect_uris: string[];
  grant_types: string[];
  token_endpoint_auth_method: "none" | "client_secret_basic" | "client_secret_post";
  /** Scopes the client may ask for; null: any. */
  scopes: string[] | null;
  secret_hash: string | null;
  metadata: ColumnType<Record<string, unknown>, string, string>;
  created_at: CreatedAt;
  fetched_at: Date | null;
  deleted_at: Date | null;
}

/** Remembered consent: one live grant per account and client. */
export interface OAuthGrantsTable {
  id: string;
  account_id: string;
  client_id: string;
  /** The API key the person signed in with; its revocation ends the grant. */
  api_key_id: string;
  scopes: string[];
  created_at: CreatedAt;
  updated_at: Timestamp;
  revoked_at: Date | null;
}

export interface OAuthCodesTable {
  code_hash: string;
  grant_id: string;
  client_id: string;
  account_id: string;
  api_key_id: string;
  redirect_uri: string;
  scopes: string[];
  resource: string;
  code_challenge: string;
  family_id: string;
  created_at: CreatedAt;
  expires_at: Date;
  used_at: Date | null;
}

export interface OAuthTokensTable {
  id: string;
  kind: "access" | "refresh";
  token_hash: string;
  family_id: string;
  /** null for client_credentials tokens. */
  grant_id: string | null;
  client_id: string;
  account_id: string;
  api_key_id: string;
  scopes: string[];
  resource: string;
  created_at: CreatedAt;
  expires_at: Date;
  rotated_at: Date | null;
  revoked_at: Date | null;
}

/** Sign-in sessions (the authorization page's cookie; the dashboard's too). */
export interface OAuthSessionsTable {
  id: string;
  token_hash: string;
  account_id: string;
  api_key_id: string;
  created_at: CreatedAt;
  expires_at: Date;
  revoked_at: Date | null;
}

/** An account's webhook endpoint (migration 0016); its signing secret sealed like environment variables. */
export interface NotificationEndpointsTable {
  id: string;
  account_id: string;
  url: string;
  events: string[];
  enabled: Generated<boolean>;
  key_id: string;
  secret_ciphertext: Buffer;
  created_at: CreatedAt;
  updated_at: Date;
}

/** One event for one endpoint: the durable delivery queue (migration 0016). */
export interface NotificationDeliveriesTable {
  /** Also the webhook-id: the same on every attempt and redelivery. */
  id: string;
  endpoint_id: string;
  account_id: string;
  event: string;
  subject_kind: "run" | "analysis";
  subject_id: string;
  /** When the run or analysis reached its terminal status (the body's timestamp). */
  occurred_at: Date;
  /** The JSON body, rendered on the first attempt and kept. */
  payload: string | null;
  status: "queued" | "sending" | "delivered" | "failed";
  attempts: Generated<number>;
  /** When it may next be claimed: a lease while sending, a backoff after a failed attempt. */
  available_at: Generated<Date>;
  /** No attempt is scheduled after this; set by the first attempt (and again by the first after a redelivery). */
  retry_until: Date | null;
  last_attempt_at: Date | null;
  response_status: number | null;
  last_error: string | null;
  delivered_at: Date | null;
  created_at: CreatedAt;
}

export interface PoolPodsTable {
  id: string;
  pool: string;
  namespace: string;
  job_name: string;
  credential_hash: string;
  state: Generated<"waiting" | "claimed" | "assigned" | "retired" | "lost">;
  run_id: string | null;
  assignment_key_id: string | null;
  assignment_ciphertext: Buffer | null;
  created_at: CreatedAt;
  ready_at: Date | null;
  claimed_at: Date | null;
  assigned_at: Date | null;
  checked_out_at: Date | null;
  environment_ready_at: Date | null;
  started_at: Date | null;
  ended_at: Date | null;
  /** What the pod's agent measured before its command started (migration 0029); null until it said. */
  diagnostics: ColumnType<AgentDiagnostics | null, string | null | undefined, string | null>;
}

export interface Database {
  installation: InstallationTable;
  checkout_tokens: CheckoutTokensTable;
  pool_pods: PoolPodsTable;
  accounts: AccountsTable;
  api_keys: ApiKeysTable;
  repositories: RepositoriesTable;
  integrations: IntegrationsTable;
  environment_variables: EnvironmentVariablesTable;
  runs: RunsTable;
  account_limits: AccountLimitsTable;
  environments: EnvironmentsTable;
  environment_pins: EnvironmentPinsTable;
  run_outputs: RunOutputsTable;
  output_tokens: OutputTokensTable;
  run_log_lines: RunLogLinesTable;
  run_metric_series: RunMetricSeriesTable;
  run_metric_points: RunMetricPointsTable;
  run_idempotency_keys: RunIdempotencyKeysTable;
  run_transitions: RunTransitionsTable;
  analysis_transitions: AnalysisTransitionsTable;
  analyses: AnalysesTable;
  analysis_log_lines: AnalysisLogLinesTable;
  github_webhook_deliveries: GitHubWebhookDeliveriesTable;
  github_check_runs: GitHubCheckRunsTable;
  github_run_check_runs: GitHubRunCheckRunsTable;
  oauth_clients: OAuthClientsTable;
  oauth_grants: OAuthGrantsTable;
  oauth_codes: OAuthCodesTable;
  oauth_tokens: OAuthTokensTable;
  oauth_sessions: OAuthSessionsTable;
  notification_endpoints: NotificationEndpointsTable;
  notification_deliveries: NotificationDeliveriesTable;
}

export type AnalysisRow = Selectable<AnalysesTable>;

export type RunRow = Selectable<RunsTable>;
export type EnvironmentRow = Selectable<EnvironmentsTable>;

export type AccountRow = Selectable<AccountsTable>;
export type ApiKeyRow = Selectable<ApiKeysTable>;
export type NewApiKeyRow = Insertable<ApiKeysTable>;
export type RepositoryRow = Selectable<RepositoriesTable>;
export type NewRepositoryRow = Insertable<RepositoriesTable>;
export type RepositoryUpdate = Updateable<RepositoriesTable>;
export type EnvVarRow = Selectable<EnvironmentVariablesTable>;
export type IntegrationRow = Selectable<IntegrationsTable>;
export type NewIntegrationRow = Insertable<IntegrationsTable>;
