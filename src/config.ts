import { createPrivateKey, randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync, existsSync } from "node:fs";
import { isIP } from "node:net";
import path from "node:path";
import { z } from "zod";
import { computeTypesSchema, DEFAULT_COMPUTE_TYPES, type ComputeTypes } from "./resources/compute-types.ts";
import { warmPoolsSchema, type WarmPool } from "./resources/warm-pools.ts";
import { DEFAULT_CLUSTER_CIDRS, isCidr, parseEgressRules, type EgressMode, type EgressRule } from "./resources/egress.ts";
import { egressSettingsProblems, gitEndpointFromUrl } from "./resources/egress-settings.ts";
import { catalogSchema, type Catalog } from "./resources/environment-catalog.ts";
import { parseRegistryPrefix } from "./resources/image-reference.ts";
import { cpuMillis, memoryBytes } from "./resources/quantity.ts";

// The only place that reads the environment. Everything else receives the
// frozen Config, so behaviour is decided once, at start, and is easy to test.

const bool = z.enum(["true", "false", "1", "0", "yes", "no"], { message: "must be true or false" }).transform((v) => v === "true" || v === "1" || v === "yes");

const int = (min: number, max: number) =>
  z.coerce
    .number({ message: "must be a whole number" })
    .int({ message: "must be a whole number" })
    .min(min, { message: `must be at least ${min}` })
    .max(max, { message: `must be at most ${max}` });

/** A Kubernetes quantity parsed to a number ("2", "500m" → millicores; "16Gi" → bytes); "0": no cap. */
const quantityOf = (parse: (q: string) => number | null, example: string) =>
  z.string().transform((v, ctx) => {
    const n = parse(v);
    if (n === null) ctx.addIssue({ code: "custom", message: `must be a Kubernetes quantity such as ${example} (0: no cap)` });
    return n ?? 0;
  });

const base64Key = z.string().refine((v) => Buffer.from(v, "base64").length === 32 && /^[A-Za-z0-9+/]+={0,2}$/.test(v), {
  message: "must be base64 of exactly 32 bytes (generate one with: openssl rand -base64 32)",
});

// Non-secret variables for checkout and dependency install (a package mirror's
// address, say); reserved names would break the checkout, so they are refused.
const preprocessEnvSchema = z.record(
  z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/, "must be a variable name")
    .refine((k) => !/^(CODEPLANE_|GIT_)/.test(k) && k !== "HOME" && k !== "PATH", "CODEPLANE_*, GIT_*, HOME and PATH are set by codeplane"),
  z.string().max(4096),
);

/** An http(s) base URL without credentials, query or fragment; trailing slashes dropped. */
const httpUrl = z
  .url({ protocol: /^https?$/, message: "must be an http:// or https:// URL" })
  .refine(
    (v) => {
      const u = URL.parse(v);
      return !u || (!u.username && !u.password && !u.search && !u.hash);
    },
    { message: "must not carry credentials, a query or a fragment" },
  )
  .transform((v) => v.replace(/\/+$/, ""));

const keyId = z.string().regex(/^[A-Za-z0-9_-]{1,32}$/, { message: "must be 1-32 letters, digits, '_' or '-'" });

// Every variable here has a one-line meaning in config-reference.ts, from which
// with this schema and the chart docs/operators/configuration.md is generated
// (npm run docs:config; src/config-doc.test.ts fails when either drifts).
/**
 * GET /v1/runs/events streams an account may hold open on one API process
 * unless the operator says otherwise: a person's tabs on the runs list and a
 * few scripts. Each holds a connection and a place in each look's fan-out.
 */
export const RUN_EVENT_STREAMS_PER_ACCOUNT = 10;

export const envSchema = z.object({
  DATABASE_URL: z.string().min(1).optional(),
  CODEPLANE_DATA_DIR: z.string().min(1).default("./.codeplane"),
  PORT: int(0, 65535).default(8080),
  CODEPLANE_HOST: z.string().min(1).default("0.0.0.0"),
  CODEPLANE_LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  CODEPLANE_ENCRYPTION_KEY: base64Key.optional(),
  CODEPLANE_ENCRYPTION_KEY_ID: keyId.default("k1"),
  // Older keys kept for decryption while `codeplane secrets reencrypt` moves rows to the current key.
  CODEPLANE_ENCRYPTION_OLD_KEYS: z
    .string()
    .default("")
    .transform((v, ctx) => {
      const keys: Record<string, string> = {};
      for (const part of v
        .split(",")
        .map((p) => p.trim())
        .filter(Boolean)) {
        const [id, key] = part.split(":", 2);
        if (!id || !key || !keyId.safeParse(id).success || !base64Key.safeParse(key).success) {
          ctx.addIssue({ code: "custom", message: "must be a comma-separated list of <key-id>:<base64 32-byte key>" });
          return z.NEVER;
        }
        keys[id] = key;
      }
      return keys;
    }),
  CODEPLANE_MIGRATE_ON_START: bool.default(true),
  CODEPLANE_ALLOW_LOCAL_REPOSITORIES: bool.default(false),
  CODEPLANE_BODY_LIMIT_BYTES: int(1024, 64 * 1024 * 1024).default(1024 * 1024),
  CODEPLANE_RATE_LIMIT_REQUESTS: int(0, 1_000_000).default(600),
  CODEPLANE_RATE_LIMIT_WINDOW_SECONDS: int(1, 3600).default(60),
  CODEPLANE_AUTH_FAILURE_LIMIT: int(0, 1_000_000).default(30),
  CODEPLANE_MCP_MAX_BATCH_MESSAGES: int(1, 1000).default(10),
  CODEPLANE_MCP_MAX_WAITS_PER_KEY: int(0, 1000).default(4),
  CODEPLANE_MCP_MAX_RESULT_BYTES: int(64 * 1024, 64 * 1024 * 1024).default(1024 * 1024),
  CODEPLANE_RUN_EVENT_STREAMS_PER_ACCOUNT: int(1, 10_000).default(RUN_EVENT_STREAMS_PER_ACCOUNT),
  CODEPLANE_DB_POOL_MAX: int(1, 200).default(10),
  CODEPLANE_DB_PREPARED_STATEMENTS: bool.default(true),
  CODEPLANE_GIT_CACHE_DIR: z.string().min(1).optional(),
  CODEPLANE_GIT_REFRESH_SECONDS: int(0, 86_400).default(60),
  CODEPLANE_GIT_TIMEOUT_SECONDS: int(1, 3600).default(120),
  CODEPLANE_GIT_MAX_FETCHES: int(1, 256).default(4),
  // Unset: half of CODEPLANE_GIT_MAX_FETCHES (at least 1).
  CODEPLANE_GIT_MAX_FETCHES_PER_ACCOUNT: int(1, 256).optional(),
  CODEPLANE_GIT_QUEUE_WAIT_SECONDS: int(0, 3600).default(10),
  CODEPLANE_MAX_FILE_BYTES: int(1, 64 * 1024 * 1024).default(1024 * 1024),
  CODEPLANE_SHUTDOWN_TIMEOUT_SECONDS: int(1, 600).default(25),
  CODEPLANE_IDLE_MEMORY_RELEASE_SECONDS: int(0, 86_400).default(10),
  CODEPLANE_TRUST_PROXY: bool.default(false),
  CODEPLANE_BOOTSTRAP_ACCOUNT: z
    .string()
    .regex(/^[a-z0-9][a-z0-9._-]{0,62}$/, "must be a valid account name")
    .default("default"),
  CODEPLANE_BOOTSTRAP_API_KEY: z
    .string()
    .regex(/^cp_[0-9A-Za-z]{38}$/, "must be a codeplane API key (cp_ followed by 38 letters and digits)")
    .optional(),
  KUBECONFIG: z.string().min(1).optional(),
  CODEPLANE_COMPONENTS: z
    .string()
    .default("api,controller")
    .transform((v, ctx) => {
      const parts = v
        .split(",")
        .map((p) => p.trim())
        .filter(Boolean);
      if (!parts.length || parts.some((p) => p !== "api" && p !== "controller")) {
        ctx.addIssue({ code: "custom", message: "must be 'api', 'controller' or 'api,controller'" });
        return z.NEVER;
      }
      return { api: parts.includes("api"), controller: parts.includes("controller") };
    }),
  CODEPLANE_RUNNER_IMAGE: z.string().min(1).default("codeplane-runner:dev"),
  CODEPLANE_IMAGE: z.string().min(1).default("codeplane:dev"),
  CODEPLANE_IMAGE_PULL_POLICY: z.enum(["Always", "IfNotPresent", "Never"]).default("IfNotPresent"),
  CODEPLANE_IMAGE_PULL_SECRETS: z
    .string()
    .default("")
    .transform((v) =>
      v
        .split(",")
        .map((n) => n.trim())
        .filter(Boolean),
    )
    .pipe(
      z
        .array(
          z
            .string()
            .regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, "must be comma-separated Secret names")
            .max(253),
        )
        .max(16),
    ),
  CODEPLANE_JOB_TTL_SECONDS: int(0, 30 * 86_400).default(3600),
  CODEPLANE_RESOURCE_RETENTION_SECONDS: int(1, 365 * 86_400).default(7 * 86_400),
  CODEPLANE_LEADER_LEASE_SECONDS: int(2, 300).default(10),
  CODEPLANE_RUN_DEFAULT_TIMEOUT_SECONDS: int(1, 7 * 86_400).default(3600),
  CODEPLANE_RUN_MAX_TIMEOUT_SECONDS: int(1, 7 * 86_400).default(86_400),
  CODEPLANE_LIMIT_EXECUTING_PER_ACCOUNT: int(0, 1_000_000).default(0),
  CODEPLANE_LIMIT_WAITING_PER_ACCOUNT: int(0, 1_000_000).default(0),
  CODEPLANE_LIMIT_EXECUTING_TOTAL: int(0, 1_000_000).default(0),
  CODEPLANE_LIMIT_CPU_PER_ACCOUNT: quantityOf(cpuMillis, "'8' or '500m'").default(0),
  CODEPLANE_LIMIT_MEMORY_PER_ACCOUNT: quantityOf(memoryBytes, "'32Gi'").default(0),
  CODEPLANE_LIMIT_RETRY_AFTER_SECONDS: int(1, 3600).default(30),
  CODEPLANE_KUEUE_CLUSTER_QUEUE: z
    .string()
    .max(253)
    .regex(/^([a-z0-9]([-a-z0-9.]*[a-z0-9])?)?$/, "must be a ClusterQueue name (lower-case DNS subdomain) or empty")
    .default(""),
  CODEPLANE_KUEUE_MAX_WAIT_SECONDS: int(60, 30 * 86_400).default(86_400),
  CODEPLANE_RUN_OUTPUT_COLLECT_SECONDS: int(10, 3600).default(120),
  CODEPLANE_OUTPUT_MAX_FILE_BYTES: int(1, 2 ** 50).default(1024 ** 3),
  CODEPLANE_OUTPUT_MAX_RUN_BYTES: int(1, 2 ** 50).default(2 * 1024 ** 3),
  CODEPLANE_OUTPUT_MAX_RUN_FILES: int(1, 1_000_000).default(1000),
  CODEPLANE_OUTPUT_MAX_ACCOUNT_BYTES: int(1, 2 ** 53 - 1).default(50 * 1024 ** 3),
  CODEPLANE_OUTPUT_MAX_ACCOUNT_FILES: int(1, 100_000_000).default(100_000),
  CODEPLANE_OUTPUT_RETENTION_DAYS: int(0, 36_500).default(30),
  CODEPLANE_LOG_MAX_BYTES: int(1024, 1024 * 1024 * 1024).default(10 * 1024 * 1024),
  CODEPLANE_RUN_METRICS_MAX_SERIES: int(1, 10_000).default(100),
  CODEPLANE_RUN_METRICS_MAX_POINTS: int(1, 1_000_000).default(10_000),
  CODEPLANE_RUN_METRICS_MAX_NAME_LENGTH: int(1, 1024).default(128),
  CODEPLANE_ANALYSIS_TIMEOUT_SECONDS: int(30, 86_400).default(900),
  CODEPLANE_ANALYSIS_COMPUTE_TYPE: z.string().min(1).max(63).default("cpu-general"),
  CODEPLANE_COMPUTE_TYPES: z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined) return DEFAULT_COMPUTE_TYPES;
      let json: unknown;
      try {
        json = JSON.parse(v);
      } catch {
        ctx.addIssue({ code: "custom", message: 'must be JSON: {"name": {"requests": {...}, "limits": {...}}}' });
        return z.NEVER;
      }
      const r = computeTypesSchema.safeParse(json);
      if (!r.success) {
        ctx.addIssue({ code: "custom", message: `invalid compute types: ${z.prettifyError(r.error)}` });
        return z.NEVER;
      }
      return r.data;
    }),
  CODEPLANE_WARM_POOLS: z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v.trim() === "") return [];
      let json: unknown;
      try {
        json = JSON.parse(v);
      } catch {
        ctx.addIssue({ code: "custom", message: 'must be JSON: [{"name": "py", "environment": "<key>", "compute_type": "cpu-general", "size": 2}]' });
        return z.NEVER;
      }
      const r = warmPoolsSchema.safeParse(json);
      if (!r.success) {
        ctx.addIssue({ code: "custom", message: `invalid warm pools: ${z.prettifyError(r.error)}` });
        return z.NEVER;
      }
      return r.data;
    }),
  CODEPLANE_NAMESPACE: z
    .string()
    .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/)
    .max(63)
    .default("codeplane"),
  CODEPLANE_INTERNAL_URL: z
    .url({ protocol: /^https?$/, message: "must be an http:// or https:// URL" })
    .refine(
      (v) => {
        const u = new URL(v);
        return !u.username && !u.password && !u.search && !u.hash;
      },
      { message: "must not carry credentials, a query or a fragment" },
    )
    .transform((v) => v.replace(/\/+$/, ""))
    .optional(),
  CODEPLANE_GIT_PORT: int(0, 65535).optional(),
  CODEPLANE_GIT_HOST: z.string().min(1).optional(),
  CODEPLANE_METRICS_PORT: int(0, 65535).optional(),
  CODEPLANE_GIT_MAX_UPLOADS: int(1, 256).default(8),
  CODEPLANE_RUN_EGRESS: z.enum(["restricted", "open"]).default("restricted"),
  CODEPLANE_RUN_EGRESS_ALLOW: z
    .string()
    .default("")
    .transform((v, ctx) => {
      const rules = parseEgressRules(v);
      if (typeof rules === "string") {
        ctx.addIssue({ code: "custom", message: rules });
        return z.NEVER;
      }
      return rules;
    }),
  CODEPLANE_RUN_EGRESS_CLUSTER_CIDRS: z
    .string()
    .default(DEFAULT_CLUSTER_CIDRS.join(","))
    .transform((v, ctx) => {
      const cidrs = v
        .split(",")
        .map((c) => c.trim())
        .filter(Boolean);
      const bad = cidrs.find((c) => !isCidr(c));
      if (bad) {
        ctx.addIssue({ code: "custom", message: `'${bad}' is not a CIDR (a.b.c.d/n or an IPv6 prefix)` });
        return z.NEVER;
      }
      return cidrs;
    }),
  // The workload NetworkPolicy the controller applies in CODEPLANE_NAMESPACE at
  // start, built from these settings (the Helm chart names it); unset: the
  // controller applies none, and `codeplane install` applies codeplane-workloads.
  CODEPLANE_RUN_EGRESS_POLICY: z
    .string()
    .regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, "must be a Kubernetes object name")
    .max(253)
    .optional(),
  // The pods behind CODEPLANE_INTERNAL_URL, as <namespace>/<label>=<value>,...
  // (the Helm chart's API pods): the policy lets runs reach them on the git
  // port, where a Service's DNS name could not be an address.
  CODEPLANE_RUN_EGRESS_GIT_PODS: z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined) return null;
      const m = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?)\/(.+)$/.exec(v);
      const pairs = m ? m[3]!.split(",").map((p) => p.trim().split("=")) : [];
      const label = /^([a-z0-9]([-a-z0-9.]*[a-z0-9])?\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
      const value = /^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$/;
      if (!m || !pairs.every((p) => p.length === 2 && label.test(p[0]!) && value.test(p[1]!))) {
        ctx.addIssue({
          code: "custom",
          message: "must be <namespace>/<label>=<value>[,<label>=<value>...], e.g. codeplane/app.kubernetes.io/instance=codeplane",
        });
        return z.NEVER;
      }
      return { namespace: m[1]!, podSelector: Object.fromEntries(pairs) as Record<string, string> };
    }),
  // The GitHub App (see loadGitHub: all of the required ones or none).
  CODEPLANE_GITHUB_APP_ID: z
    .string()
    .regex(/^[1-9][0-9]{0,15}$/, "must be the App's numeric id")
    .optional(),
  CODEPLANE_GITHUB_PRIVATE_KEY: z.string().optional(),
  CODEPLANE_GITHUB_PRIVATE_KEY_FILE: z.string().min(1).optional(),
  CODEPLANE_GITHUB_WEBHOOK_SECRET: z.string().optional(),
  CODEPLANE_GITHUB_WEBHOOK_OLD_SECRETS: z
    .string()
    .optional()
    .transform((v) =>
      (v ?? "")
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean),
    ),
  CODEPLANE_GITHUB_APP_SLUG: z
    .string()
    .regex(/^[a-z0-9][a-z0-9-]{0,99}$/, "must be the App's slug (lower-case letters, digits and '-', as in github.com/apps/<slug>)")
    .optional(),
  CODEPLANE_GITHUB_API_URL: httpUrl.optional(),
  CODEPLANE_GITHUB_TIMEOUT_SECONDS: int(1, 300).default(10),
  CODEPLANE_WEBHOOK_LEASE_SECONDS: int(3, 3600).default(30),
  // POST /v1/webhooks/github's limits (src/api/webhook-body.ts): it is unauthenticated until the body's signature is checked.
  CODEPLANE_WEBHOOK_MAX_BODY_BYTES: int(1024, 64 * 1024 * 1024).default(25 * 1024 * 1024),
  CODEPLANE_WEBHOOK_MAX_INFLIGHT_BYTES: int(1024, 1024 * 1024 * 1024).default(64 * 1024 * 1024),
  CODEPLANE_WEBHOOK_READ_TIMEOUT_SECONDS: int(1, 300).default(10),
  CODEPLANE_WEBHOOK_RATE_LIMIT_REQUESTS: int(0, 1_000_000).default(600),
  // 1,000 levels are still cleaned and stored safely; JSON.stringify's replacer overflows near 5,000.
  CODEPLANE_WEBHOOK_MAX_DEPTH: int(1, 1000).default(100),
  // Notifications (webhooks to accounts' endpoints, src/domain/notifications/).
  CODEPLANE_NOTIFICATIONS_MAX_ENDPOINTS: int(1, 1000).default(20),
  CODEPLANE_NOTIFICATIONS_TIMEOUT_SECONDS: int(1, 120).default(10),
  CODEPLANE_NOTIFICATIONS_CONCURRENCY: int(1, 256).default(8),
  CODEPLANE_NOTIFICATIONS_MAX_RESPONSE_BYTES: int(1, 1024 * 1024).default(4096),
  CODEPLANE_NOTIFICATIONS_RETRY_HOURS: int(24, 720).default(24),
  CODEPLANE_NOTIFICATIONS_RETRY_BASE_SECONDS: int(1, 3600).default(10),
  CODEPLANE_NOTIFICATIONS_RETRY_MAX_DELAY_SECONDS: int(1, 86_400).default(3600),
  CODEPLANE_NOTIFICATIONS_RETENTION_DAYS: int(1, 3650).default(30),
  CODEPLANE_PUBLIC_URL: httpUrl.optional(),
  // The OAuth 2.0 authorization server (src/oauth/).
  CODEPLANE_OAUTH_ACCESS_TOKEN_SECONDS: int(60, 86_400).default(3600),
  CODEPLANE_OAUTH_REFRESH_TOKEN_SECONDS: int(300, 365 * 86_400).default(30 * 86_400),
  CODEPLANE_SESSION_SECONDS: int(300, 30 * 86_400).default(12 * 3600),
  CODEPLANE_OAUTH_RATE_LIMIT_REQUESTS: int(0, 1_000_000).default(30),
  CODEPLANE_OAUTH_ALLOW_LOCAL_CLIENT_METADATA: bool.default(false),
  CODEPLANE_OAUTH_CLIENT_METADATA_MAX_FETCHES: int(1, 1000).default(8),
  CODEPLANE_OAUTH_CLIENT_METADATA_FAILURE_SECONDS: int(0, 3600).default(60),
  CODEPLANE_OAUTH_CLIENT_METADATA_UNUSED_DAYS: int(1, 3650).default(30),
  // Sign-in through an upstream OpenID Connect provider (see loadOidc: the first three all or none).
  CODEPLANE_OIDC_ISSUER: httpUrl.optional(),
  CODEPLANE_OIDC_CLIENT_ID: z.string().optional(),
  CODEPLANE_OIDC_CLIENT_SECRET: z.string().optional(),
  CODEPLANE_OIDC_PROVIDER_NAME: z.string().max(60).optional(),
  CODEPLANE_OIDC_ACCOUNT_CLAIM: z
    .string()
    .regex(/^[A-Za-z0-9_:.-]{1,100}$/, "must be a claim name")
    .default("email"),
  CODEPLANE_OIDC_ACCOUNTS: z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined) return null;
      const pairs: [string, string][] = [];
      for (const item of v
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean)) {
        const at = item.lastIndexOf("=");
        if (at <= 0 || at === item.length - 1) {
          ctx.addIssue({ code: "custom", message: `'${item}' is not value=account` });
          return z.NEVER;
        }
        pairs.push([item.slice(0, at).trim(), item.slice(at + 1).trim()]);
      }
      return pairs;
    }),
  CODEPLANE_OIDC_SCOPES: z
    .string()
    .optional()
    .transform((v) => (v === undefined ? null : v.split(/[\s,]+/).filter(Boolean))),
  CODEPLANE_OIDC_UPSTREAM_SCOPES: z
    .string()
    .optional()
    .transform((v) => (v === undefined ? null : v.split(/[\s,]+/).filter(Boolean))),
  CODEPLANE_OIDC_API_KEY_SIGN_IN: bool.default(true),
  CODEPLANE_ENVIRONMENT_IMAGES: z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v.trim() === "") return undefined;
      let json: unknown;
      try {
        json = JSON.parse(v);
      } catch {
        ctx.addIssue({ code: "custom", message: 'must be JSON: [{"image": "...", "toolchains": {"python": "3.11"}}]' });
        return z.NEVER;
      }
      // [] is the chart's default: no catalog of the operator's, so the runner image alone.
      if (Array.isArray(json) && json.length === 0) return undefined;
      const r = catalogSchema.safeParse(json);
      if (!r.success) {
        ctx.addIssue({ code: "custom", message: `invalid catalog: ${z.prettifyError(r.error)}` });
        return z.NEVER;
      }
      return r.data;
    }),
  CODEPLANE_ENVIRONMENT_ALLOWED_REGISTRIES: z
    .string()
    .default("")
    .transform((v, ctx) => {
      const prefixes: string[] = [];
      for (const item of v.split(/[\s,]+/).filter(Boolean)) {
        const r = parseRegistryPrefix(item);
        if (!r.ok) {
          ctx.addIssue({ code: "custom", message: r.reason });
          return z.NEVER;
        }
        prefixes.push(r.value);
      }
      return [...new Set(prefixes)];
    }),
  CODEPLANE_ENVIRONMENT_BUILD_TIMEOUT_SECONDS: int(60, 7 * 24 * 3600).default(1800),
  CODEPLANE_ENVIRONMENT_MAX_BYTES: int(1024 * 1024, 2 ** 50).default(4 * 1024 ** 3),
  CODEPLANE_ENVIRONMENT_CACHE_MAX_BYTES: int(1024 * 1024, 2 ** 53 - 1).default(50 * 1024 ** 3),
  CODEPLANE_ENVIRONMENT_UPLOAD_TIMEOUT_SECONDS: int(60, 7 * 24 * 3600).default(1800),
  CODEPLANE_RUN_PREPROCESS_ENV: z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined) return {};
      let json: unknown;
      try {
        json = JSON.parse(v);
      } catch {
        ctx.addIssue({ code: "custom", message: 'must be JSON: {"PIP_INDEX_URL": "http://..."}' });
        return z.NEVER;
      }
      const r = preprocessEnvSchema.safeParse(json);
      if (!r.success) {
        ctx.addIssue({ code: "custom", message: `invalid variables: ${z.prettifyError(r.error)}` });
        return z.NEVER;
      }
      return r.data;
    }), // Where environment archives (and later run outputs) are kept (src/storage/).
  CODEPLANE_OBJECT_STORE: z.enum(["directory", "s3"]).default("directory"),
  CODEPLANE_OBJECT_STORE_DIR: z.string().min(1).optional(),
  CODEPLANE_S3_ENDPOINT: httpUrl.optional(),
  CODEPLANE_S3_BUCKET: z
    .string()
    .regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, "must be an S3 bucket name (3-63 lower-case letters, digits, '.' and '-')")
    .optional(),
  CODEPLANE_S3_REGION: z
    .string()
    .regex(/^[a-z0-9-]{1,64}$/, "must be a region name, e.g. us-east-1")
    .default("us-east-1"),
  CODEPLANE_S3_FORCE_PATH_STYLE: bool.default(false),
  CODEPLANE_S3_ACCESS_KEY_ID: z.string().min(1).max(256).optional(),
  CODEPLANE_S3_SECRET_ACCESS_KEY: z.string().min(1).max(1024).optional(),
});

export interface EncryptionKeys {
  currentId: string;
  keys: Readonly<Record<string, Buffer>>;
}

/** The operator's limits (docs/operators/limits.md); 0 means none. */
export interface Limits {
  executingPerAccount: number;
  waitingPerAccount: number;
  executingTotal: number;
  /** Millicores one account's executing runs and analyses may request at once; 0: no cap (the built-in limiter only). */
  cpuPerAccount: number;
  /** Bytes of memory, likewise. */
  memoryPerAccount: number;
  retryAfterSeconds: number;
}

export interface Config {
  /** `preparedStatements`: the hot statements that carry a name are prepared once per connection (src/db/named-statements.ts). */
  database: { url: string | null; poolMax: number; preparedStatements: boolean; migrateOnStart: boolean };
  dataDir: string;
  http: {
    host: string;
    port: number;
    /** A second listener that serves only `/git/` (what run pods may reach); null: `/git/` on the main port only. */
    gitPort: number | null;
    /** The git listener's address (CODEPLANE_GIT_HOST; default: the main listener's). */
    gitHost: string;
    /** A listener for `/metrics` alone; when set the main port no longer serves it. */
    metricsPort: number | null;
    bodyLimitBytes: number;
    trustProxy: boolean;
    shutdownTimeoutMs: number;
  };
  logLevel: string;
  /** Quiet time after traffic before the service gives grown heap back (src/idle-memory-release.ts); 0: never. */
  idleMemoryReleaseSeconds: number;
  encryption: EncryptionKeys;
  /** `authFailures`: failed authentications per client address and window (then 429); 0 disables. */
  rateLimit: { requests: number; windowSeconds: number; authFailures: number };
  /** POST /mcp: JSON-RPC messages per request, tool-call waits held at once per credential (per process), bytes of one tool result. */
  mcp: { maxBatchMessages: number; maxWaitsPerKey: number; maxResultBytes: number };
  /** GET /v1/runs/events: streams one account may hold open on one API process (beyond: 429). */
  runEvents: { streamsPerAccount: number };
  repositories: {
    allowLocal: boolean;
    gitCacheDir: string;
    refreshIntervalSeconds: number;
    commandTimeoutMs: number;
    maxFileBytes: number;
    /** Clones and fetches at once, all accounts together. */
    maxConcurrentFetches: number;
    /** Clones and fetches at once for one account (at most maxConcurrentFetches). */
    maxConcurrentFetchesPerAccount: number;
    /** Longest wait for a fetch slot before answering 503 with Retry-After. */
    fetchQueueWaitMs: number;
    /** `git upload-pack` processes serving checkouts at once. */
    maxConcurrentUploads: number;
  };
  kubernetes: {
    kubeconfig: string | null;
    namespace: string;
    /** Finished Run and Analysis resources are deleted this long after they finished (rows and logs stay). */
    resourceRetentionSeconds: number;
    /** The controller's Lease: how long a crashed leader delays its successor at most (plus a second). */
    leaderLeaseSeconds: number;
  };
  components: { api: boolean; controller: boolean };
  runs: {
    runnerImage: string;
    codeplaneImage: string;
    imagePullPolicy: "Always" | "IfNotPresent" | "Never";
    /** Secrets (in the run namespace) run and analysis pods pull their images with. */
    imagePullSecrets: string[];
    jobTtlSeconds: number;
    defaultTimeoutSeconds: number;
    maxTimeoutSeconds: number;
    /** Per-account limits (0: none) and the installation's executing limit; accounts may override theirs (codeplane accounts limits). */
    limits: Limits;
    /** Kueue admits runs (CODEPLANE_KUEUE_CLUSTER_QUEUE, where the cluster serves Kueue); null: the built-in limiter. */
    kueue: { clusterQueue: string; maxWaitSeconds: number } | null;
    /**
     * Seconds a run's pod is given, past its timeout, to collect its outputs: the runner stops the
     * command at the timeout and the Job's deadline is this much later; also the pod's termination
     * grace period, so a cancelled run collects too.
     */
    outputCollectSeconds: number;
    logMaxBytes: number;
    /** The bounds on one run's metrics: series, points per series, characters of a name. */
    metrics: { maxSeries: number; maxPointsPerSeries: number; maxNameLength: number };
    computeTypes: ComputeTypes;
    /** Warm pools (CODEPLANE_WARM_POOLS, issue 33): pods started ahead of their runs. */
    warmPools: WarmPool[];
    /**
     * Base URL pods clone from (codeplane's `/git/` endpoint). null: derived
     * from the git listener when it is bound to one address
     * (http://<CODEPLANE_GIT_HOST>:<its port>); otherwise workloads cannot
     * start and say so.
     */
    internalUrl: string | null;
    egress: {
      mode: EgressMode;
      /** Destinations an operator allows besides DNS and the git endpoint (a package mirror). */
      allow: EgressRule[];
      /** Never reachable from runs even with open egress (besides the metadata address, always denied). */
      clusterCidrs: string[];
      /** The NetworkPolicy the controller applies at start (CODEPLANE_RUN_EGRESS_POLICY); null: none. */
      policyName: string | null;
      /** The pods the policy lets runs clone from, on the git listener's port (CODEPLANE_RUN_EGRESS_GIT_PODS); null: CODEPLANE_INTERNAL_URL's address. */
      gitPods: { namespace: string; podSelector: Record<string, string>; port: number } | null;
    };
    /** Non-secret variables the checkout and dependency install get (a package mirror, say). */
    preprocessEnv: Record<string, string>;
  };
  environments: {
    /** Toolchain and version → image, per compute preset where an entry names presets (CODEPLANE_ENVIRONMENT_IMAGES). */
    catalog: Catalog;
    /**
     * Registry prefixes (`ghcr.io/acme`, normalised) whose images a repository may declare for itself
     * (.devcontainer/devcontainer.json's `image`), matched on whole path segments; empty: never
     * (CODEPLANE_ENVIRONMENT_ALLOWED_REGISTRIES).
     */
    allowedRegistries: readonly string[];
    /** An environment build's time budget, apart from any run's timeout. */
    buildTimeoutSeconds: number;
    /** Largest archive one build may store. */
    maxArchiveBytes: number;
    /** All stored archives together; least recently used are dropped beyond it. */
    maxCacheBytes: number;
    /** How long one archive upload (the request, body included) may take on the internal door, instead of the server's 300 s. */
    uploadTimeoutMs: number;
  };
  analyses: {
    /** The Job's deadline; the analyzer's own time budget is a little less, so it reports what it found. */
    timeoutSeconds: number;
    /** The compute preset (from computeTypes) whose requests and limits analysis pods get. */
    computeType: string;
  };
  bootstrap: { account: string; apiKey: string | null };
  /** The GitHub App; null when none is configured (the integration endpoints then answer 503 naming githubMissing). */
  github: GitHubConfig | null;
  /** The settings a GitHub App needs that are not set (empty when github is configured), for the 503's detail. */
  githubMissing: readonly string[];
  /** The base URL people and GitHub reach this service at (CODEPLANE_PUBLIC_URL), no trailing slash; null when unset. */
  publicUrl: string | null;
  /**
   * How long a replica holds a webhook delivery (or a check-run update) it is
   * handling before another may take it over; renewed while it works, so this
   * is how long a crashed replica's work waits, not a limit on handling.
   */
  webhookLeaseSeconds: number;
  /** Webhooks to accounts' notification endpoints (docs/users/notifications.md). */
  notifications: {
    maxEndpointsPerAccount: number;
    /** One attempt: connecting, sending and the answer. */
    timeoutMs: number;
    /** Attempts in flight at once in this process. */
    concurrency: number;
    /** Bytes of an answer read (the rest is dropped with the connection). */
    maxResponseBytes: number;
    /** How long a delivery is retried from its first attempt. */
    retryWindowSeconds: number;
    retryBaseSeconds: number;
    retryMaxDelaySeconds: number;
    /** Finished deliveries are kept this long. */
    retentionDays: number;
  };
  /** POST /v1/webhooks/github: body bytes (one, and all being read at once), how long a body may take, deliveries per address and window, JSON depth. */
  webhookIntake: { maxBodyBytes: number; maxInflightBytes: number; readTimeoutMs: number; rateLimitRequests: number; maxDepth: number };
  oauth: OAuthConfig;
  /** Run outputs' limits and retention (src/domain/outputs). */
  outputs: {
    maxFileBytes: number;
    maxRunBytes: number;
    maxRunFiles: number;
    maxAccountBytes: number;
    maxAccountFiles: number;
    /** 0: kept as long as their run. */
    retentionDays: number;
  };
  /** Where environment archives and run outputs are kept (src/storage/); only this process holds it, never a pod. */
  objectStore: ObjectStoreConfig;
}

/** The object store's settings: a directory (the embedded default) or an S3-compatible bucket. */
export type ObjectStoreConfig = { kind: "directory"; dir: string } | { kind: "s3"; s3: S3Settings };

export interface S3Settings {
  /** An S3-compatible service's URL (MinIO, Ceph, R2, ...); null: AWS S3 in `region`. */
  endpoint: string | null;
  bucket: string;
  region: string;
  /** Address the bucket in the path (http://host/bucket/key), as most S3-compatible servers want. */
  forcePathStyle: boolean;
  /** Both or neither; neither: the AWS SDK's default chain (AWS_* variables, web identity, instance role). Secret: never logged. */
  accessKeyId: string | null;
  secretAccessKey: string | null;
}

/** The OAuth 2.0 authorization server's settings. */
export interface OAuthConfig {
  accessTokenSeconds: number;
  refreshTokenSeconds: number;
  /** Lifetime of a sign-in session (the cookie of the authorization page and the dashboard). */
  sessionSeconds: number;
  /** Requests per client address and window on /oauth/token, /oauth/register and sign-in, each; 0 disables. */
  rateLimitRequests: number;
  /** Client ID Metadata Documents may be fetched over http:// and from loopback or private addresses (development and tests). */
  allowLocalClientMetadata: boolean;
  /** Bounds on fetching Client ID Metadata Documents (src/oauth/metadata-fetches.ts). */
  clientMetadata: ClientMetadataLimits;
  /** Sign-in through an upstream OpenID Connect provider; null when CODEPLANE_OIDC_* is not set. */
  oidc: OidcConfig | null;
  /** The authorization page offers the API-key form (always true without OIDC). */
  apiKeySignIn: boolean;
}

/** What fetching Client ID Metadata Documents may cost: an unauthenticated client_id makes codeplane GET a URL. */
export interface ClientMetadataLimits {
  /** Document fetches running at once in this process; more are refused (503) until one ends. */
  maxFetches: number;
  /** A failed fetch is answered from memory this long before the URL is tried again; 0: not remembered. */
  failureSeconds: number;
  /** A metadata-document client with no grant, not fetched for this long, is deleted. */
  unusedDays: number;
}

/** The upstream OpenID Connect provider people sign in with (src/oauth/oidc.ts). */
export interface OidcConfig {
  /** The issuer URL (https, or http on a loopback host). */
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Shown on the button: "Sign in with <name>". */
  providerName: string;
  /** The ID-token claim that names the account: `email` (its verified address's domain) or any other (its string value, or each entry of an array). */
  accountClaim: string;
  /** value=account pairs, first match wins; null: the value is the account's name. */
  accounts: [string, string][] | null;
  /** The codeplane scopes such a session carries; null: every scope but keys:write. Checked against the scope list when the server is built. */
  scopes: string[] | null;
  /** The scopes asked of the provider. */
  upstreamScopes: string[];
}

/** The settings without which there is no OIDC sign-in. */
export const OIDC_REQUIRED_SETTINGS = ["CODEPLANE_OIDC_ISSUER", "CODEPLANE_OIDC_CLIENT_ID", "CODEPLANE_OIDC_CLIENT_SECRET"] as const;

const isLoopbackHost = (host: string): boolean => host === "localhost" || host === "[::1]" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);

/** OIDC sign-in from its settings: null when none of the three is set; a ConfigError naming what is missing when only some are. */
function loadOidc(e: ParsedEnv): OidcConfig | null {
  const present = {
    CODEPLANE_OIDC_ISSUER: e.CODEPLANE_OIDC_ISSUER,
    CODEPLANE_OIDC_CLIENT_ID: e.CODEPLANE_OIDC_CLIENT_ID,
    CODEPLANE_OIDC_CLIENT_SECRET: e.CODEPLANE_OIDC_CLIENT_SECRET,
  };
  const missing = OIDC_REQUIRED_SETTINGS.filter((k) => present[k] === undefined);
  if (missing.length === OIDC_REQUIRED_SETTINGS.length) {
    if (!e.CODEPLANE_OIDC_API_KEY_SIGN_IN)
      throw new ConfigError(
        "invalid configuration:\n  CODEPLANE_OIDC_API_KEY_SIGN_IN: false needs OIDC sign-in (CODEPLANE_OIDC_ISSUER, CODEPLANE_OIDC_CLIENT_ID, CODEPLANE_OIDC_CLIENT_SECRET): nobody could sign in",
      );
    return null;
  }
  if (missing.length) {
    throw new ConfigError(
      `invalid configuration:\n${missing.map((m) => `  ${m}: required for OIDC sign-in (some CODEPLANE_OIDC_* settings are set; set all of ${OIDC_REQUIRED_SETTINGS.join(", ")}, or none)`).join("\n")}`,
    );
  }
  const issuer = new URL(e.CODEPLANE_OIDC_ISSUER!);
  if (issuer.protocol !== "https:" && !isLoopbackHost(issuer.host.replace(/:\d+$/, ""))) {
    throw new ConfigError("invalid configuration:\n  CODEPLANE_OIDC_ISSUER: must be https (http only on a loopback host: 127.0.0.1, [::1], localhost)");
  }
  if (issuer.search || issuer.hash) throw new ConfigError("invalid configuration:\n  CODEPLANE_OIDC_ISSUER: must have no query or fragment");
  const claim = e.CODEPLANE_OIDC_ACCOUNT_CLAIM;
  return {
    issuer: e.CODEPLANE_OIDC_ISSUER!,
    clientId: e.CODEPLANE_OIDC_CLIENT_ID!,
    clientSecret: e.CODEPLANE_OIDC_CLIENT_SECRET!,
    providerName: e.CODEPLANE_OIDC_PROVIDER_NAME ?? issuer.host,
    accountClaim: claim,
    accounts: e.CODEPLANE_OIDC_ACCOUNTS,
    scopes: e.CODEPLANE_OIDC_SCOPES,
    upstreamScopes: e.CODEPLANE_OIDC_UPSTREAM_SCOPES ?? ["openid", "email", ...(claim === "email" ? [] : claim === "groups" ? ["groups"] : ["profile"])],
  };
}

export interface GitHubConfig {
  appId: string;
  /** PEM (PKCS#1 or PKCS#8), from CODEPLANE_GITHUB_PRIVATE_KEY or the file CODEPLANE_GITHUB_PRIVATE_KEY_FILE names. */
  privateKey: string;
  webhookSecret: string;
  /** Secrets still accepted on webhooks during a rotation. */
  oldWebhookSecrets: readonly string[];
  appSlug: string;
  /** REST API base: https://api.github.com, or https://<host>/api/v3 for Enterprise Server. */
  apiUrl: string;
  /** Where people go (install pages) and where git clones from: https://github.com, or the server's root. */
  webUrl: string;
  /** Limit for one call to GitHub's API. */
  requestTimeoutMs: number;
}

/** The settings without which there is no GitHub App (CODEPLANE_GITHUB_PRIVATE_KEY_FILE may stand for the key). */
export const GITHUB_REQUIRED_SETTINGS = [
  "CODEPLANE_GITHUB_APP_ID",
  "CODEPLANE_GITHUB_PRIVATE_KEY",
  "CODEPLANE_GITHUB_WEBHOOK_SECRET",
  "CODEPLANE_GITHUB_APP_SLUG",
  "CODEPLANE_PUBLIC_URL",
] as const;

/**
 * GitHub's web root for its API root: github.com for api.github.com, the
 * data-residency host for api.<name>.ghe.com, and the server's root for an
 * Enterprise Server (https://host/api/v3 -> https://host).
 */
export function githubWebUrl(apiUrl: string): string {
  const u = new URL(apiUrl);
  const host = u.hostname.toLowerCase();
  if (host === "api.github.com") return "https://github.com";
  if (host.startsWith("api.") && host.endsWith(".ghe.com")) return `${u.protocol}//${u.host.slice(4)}`;
  const root = u.pathname.replace(/\/+$/, "").replace(/\/api\/v3$/i, "");
  return `${u.origin}${root}`;
}

type ParsedEnv = z.infer<typeof envSchema>;

/**
 * The GitHub App from its settings: null with what is missing when none of
 * them is set; a ConfigError naming what is missing when only some are (an
 * App half configured is a mistake to report at start, not a 503 later).
 */
function loadGitHub(e: ParsedEnv, requestTimeoutMs: number): { github: GitHubConfig | null; missing: string[] } {
  const present = {
    CODEPLANE_GITHUB_APP_ID: e.CODEPLANE_GITHUB_APP_ID !== undefined,
    CODEPLANE_GITHUB_PRIVATE_KEY: e.CODEPLANE_GITHUB_PRIVATE_KEY !== undefined || e.CODEPLANE_GITHUB_PRIVATE_KEY_FILE !== undefined,
    CODEPLANE_GITHUB_WEBHOOK_SECRET: e.CODEPLANE_GITHUB_WEBHOOK_SECRET !== undefined,
    CODEPLANE_GITHUB_APP_SLUG: e.CODEPLANE_GITHUB_APP_SLUG !== undefined,
    CODEPLANE_PUBLIC_URL: e.CODEPLANE_PUBLIC_URL !== undefined,
  };
  const missing = GITHUB_REQUIRED_SETTINGS.filter((k) => !present[k]).map((k) =>
    k === "CODEPLANE_GITHUB_PRIVATE_KEY" ? "CODEPLANE_GITHUB_PRIVATE_KEY (or CODEPLANE_GITHUB_PRIVATE_KEY_FILE)" : k,
  );
  // CODEPLANE_PUBLIC_URL alone serves other features: only the GitHub settings themselves start an App.
  const started =
    present.CODEPLANE_GITHUB_APP_ID ||
    present.CODEPLANE_GITHUB_PRIVATE_KEY ||
    present.CODEPLANE_GITHUB_WEBHOOK_SECRET ||
    present.CODEPLANE_GITHUB_APP_SLUG ||
    e.CODEPLANE_GITHUB_WEBHOOK_OLD_SECRETS.length > 0 ||
    e.CODEPLANE_GITHUB_API_URL !== undefined;
  if (!started) return { github: null, missing };
  const problems = missing.map(
    (m) => `  ${m.split(" ")[0]}: required for the GitHub App (some CODEPLANE_GITHUB_* settings are set; set all of ${missing.join(", ")}, or none)`,
  );
  if (e.CODEPLANE_GITHUB_PRIVATE_KEY !== undefined && e.CODEPLANE_GITHUB_PRIVATE_KEY_FILE !== undefined) {
    problems.push("  CODEPLANE_GITHUB_PRIVATE_KEY_FILE: set either it or CODEPLANE_GITHUB_PRIVATE_KEY, not both");
  }
  if (problems.length) throw new ConfigError(`invalid configuration:\n${problems.join("\n")}`);
  let pem: string;
  if (e.CODEPLANE_GITHUB_PRIVATE_KEY_FILE !== undefined) {
    try {
      pem = readFileSync(e.CODEPLANE_GITHUB_PRIVATE_KEY_FILE, "utf8");
    } catch (err) {
      throw new ConfigError(
        `invalid configuration:\n  CODEPLANE_GITHUB_PRIVATE_KEY_FILE: cannot read ${e.CODEPLANE_GITHUB_PRIVATE_KEY_FILE} (${(err as NodeJS.ErrnoException).code ?? "error"})`,
      );
    }
  } else {
    // A PEM pasted into one line of an env file often carries its line breaks as "\n".
    pem = e.CODEPLANE_GITHUB_PRIVATE_KEY!.replace(/\\n/g, "\n");
  }
  pem = pem.trim() + "\n";
  const keyVar = e.CODEPLANE_GITHUB_PRIVATE_KEY_FILE !== undefined ? "CODEPLANE_GITHUB_PRIVATE_KEY_FILE" : "CODEPLANE_GITHUB_PRIVATE_KEY";
  try {
    const key = createPrivateKey(pem);
    if (key.asymmetricKeyType !== "rsa") throw new Error("not RSA");
  } catch {
    // The message never quotes the value: it is a secret.
    throw new ConfigError(`invalid configuration:\n  ${keyVar}: must be the App's private key, an RSA key in PEM form (as GitHub downloads it)`);
  }
  const apiUrl = e.CODEPLANE_GITHUB_API_URL ?? "https://api.github.com";
  return {
    github: {
      appId: e.CODEPLANE_GITHUB_APP_ID!,
      privateKey: pem,
      webhookSecret: e.CODEPLANE_GITHUB_WEBHOOK_SECRET!,
      oldWebhookSecrets: e.CODEPLANE_GITHUB_WEBHOOK_OLD_SECRETS,
      appSlug: e.CODEPLANE_GITHUB_APP_SLUG!,
      apiUrl,
      webUrl: githubWebUrl(apiUrl),
      requestTimeoutMs,
    },
    missing: [],
  };
}

/**
 * Where pods reach the git listener when nobody said: its own address and
 * port, when that address is one pods can reach (not the loopback, not
 * "every address") and the port is known (not 0, chosen at start).
 */
export function derivedInternalUrl(host: string, port: number): string | null {
  const family = isIP(host);
  if (!family || port === 0 || host === "0.0.0.0" || host === "::" || host === "::1" || host.startsWith("127.")) return null;
  return `http://${family === 6 ? `[${host}]` : host}:${port}`;
}

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ConfigError";
  }
}

/**
 * With no DATABASE_URL the service runs on an embedded database under the data
 * directory; a newcomer should not have to invent a key for that, so one is
 * created once and kept beside the data it protects.
 */
function embeddedKey(dataDir: string): string {
  const file = path.join(dataDir, "encryption.key");
  if (existsSync(file)) return readFileSync(file, "utf8").trim();
  mkdirSync(dataDir, { recursive: true });
  const key = randomBytes(32).toString("base64");
  writeFileSync(file, key + "\n", { mode: 0o600, flag: "wx" });
  return key;
}

/**
 * The checks that span settings (each one alone is valid): refused at start
 * with the setting to change. Returns the git fetches allowed per account,
 * whose default derives from the process-wide limit.
 */
function checkCombinations(e: ParsedEnv): number {
  if (e.DATABASE_URL && !e.CODEPLANE_ENCRYPTION_KEY) {
    throw new ConfigError("invalid configuration:\n  CODEPLANE_ENCRYPTION_KEY: required when DATABASE_URL is set (generate one with: openssl rand -base64 32)");
  }
  if (!e.CODEPLANE_COMPUTE_TYPES[e.CODEPLANE_ANALYSIS_COMPUTE_TYPE]) {
    throw new ConfigError(
      `invalid configuration:\n  CODEPLANE_ANALYSIS_COMPUTE_TYPE: '${e.CODEPLANE_ANALYSIS_COMPUTE_TYPE}' is not one of CODEPLANE_COMPUTE_TYPES`,
    );
  }
  if (e.CODEPLANE_RUN_DEFAULT_TIMEOUT_SECONDS > e.CODEPLANE_RUN_MAX_TIMEOUT_SECONDS) {
    throw new ConfigError("invalid configuration:\n  CODEPLANE_RUN_DEFAULT_TIMEOUT_SECONDS: must not exceed CODEPLANE_RUN_MAX_TIMEOUT_SECONDS");
  }
  const fetchesPerAccount = e.CODEPLANE_GIT_MAX_FETCHES_PER_ACCOUNT ?? Math.max(1, Math.floor(e.CODEPLANE_GIT_MAX_FETCHES / 2));
  if (fetchesPerAccount > e.CODEPLANE_GIT_MAX_FETCHES) {
    throw new ConfigError("invalid configuration:\n  CODEPLANE_GIT_MAX_FETCHES_PER_ACCOUNT: must not exceed CODEPLANE_GIT_MAX_FETCHES");
  }
  for (const pool of e.CODEPLANE_WARM_POOLS) {
    if (!e.CODEPLANE_COMPUTE_TYPES[pool.compute_type]) {
      throw new ConfigError(
        `invalid configuration:\n  CODEPLANE_WARM_POOLS: pool '${pool.name}': compute type '${pool.compute_type}' is not one of CODEPLANE_COMPUTE_TYPES`,
      );
    }
  }
  if (!e.CODEPLANE_COMPUTE_TYPES["cpu-general"]) {
    throw new ConfigError("invalid configuration:\n  CODEPLANE_COMPUTE_TYPES: must define the default compute type 'cpu-general'");
  }
  // Run egress the NetworkPolicy could not enforce with the metadata address closed: refused at start, not at install.
  const gitAddress = e.CODEPLANE_INTERNAL_URL ? gitEndpointFromUrl(e.CODEPLANE_INTERNAL_URL) : null;
  const egressProblems = egressSettingsProblems({
    allow: e.CODEPLANE_RUN_EGRESS_ALLOW,
    clusterCidrs: e.CODEPLANE_RUN_EGRESS_CLUSTER_CIDRS,
    git: typeof gitAddress === "string" ? null : gitAddress,
  });
  if (egressProblems.length) throw new ConfigError(`invalid configuration:\n${egressProblems.map((p) => `  ${p}`).join("\n")}`);
  return fetchesPerAccount;
}

function webhookIntake(e: ParsedEnv): Config["webhookIntake"] {
  // Else a delivery of the largest accepted size could never be read.
  if (e.CODEPLANE_WEBHOOK_MAX_INFLIGHT_BYTES < e.CODEPLANE_WEBHOOK_MAX_BODY_BYTES) {
    throw new ConfigError("invalid configuration:\n  CODEPLANE_WEBHOOK_MAX_INFLIGHT_BYTES: must be at least CODEPLANE_WEBHOOK_MAX_BODY_BYTES");
  }
  return {
    maxBodyBytes: e.CODEPLANE_WEBHOOK_MAX_BODY_BYTES,
    maxInflightBytes: e.CODEPLANE_WEBHOOK_MAX_INFLIGHT_BYTES,
    readTimeoutMs: e.CODEPLANE_WEBHOOK_READ_TIMEOUT_SECONDS * 1000,
    rateLimitRequests: e.CODEPLANE_WEBHOOK_RATE_LIMIT_REQUESTS,
    maxDepth: e.CODEPLANE_WEBHOOK_MAX_DEPTH,
  };
}

const S3_SETTINGS = [
  "CODEPLANE_S3_ENDPOINT",
  "CODEPLANE_S3_BUCKET",
  "CODEPLANE_S3_FORCE_PATH_STYLE",
  "CODEPLANE_S3_ACCESS_KEY_ID",
  "CODEPLANE_S3_SECRET_ACCESS_KEY",
] as const;

/**
 * The object store: settings of the other kind are refused rather than
 * ignored (a bucket named with the store left at `directory` would keep
 * archives on one pod's disk without a word). `present` is the environment as
 * given, to tell a setting from its default.
 */
function objectStore(e: ParsedEnv, present: Readonly<Record<string, unknown>>, dataDir: string): ObjectStoreConfig {
  const problem = (lines: string[]) => new ConfigError(`invalid configuration:\n${lines.map((l) => `  ${l}`).join("\n")}`);
  if (e.CODEPLANE_OBJECT_STORE === "directory") {
    const stray = [...S3_SETTINGS, "CODEPLANE_S3_REGION"].filter((k) => k in present);
    if (stray.length) throw problem(stray.map((k) => `${k}: set, but CODEPLANE_OBJECT_STORE is directory (set CODEPLANE_OBJECT_STORE=s3, or unset it)`));
    return { kind: "directory", dir: path.resolve(e.CODEPLANE_OBJECT_STORE_DIR ?? path.join(dataDir, "objects")) };
  }
  const lines: string[] = [];
  if ("CODEPLANE_OBJECT_STORE_DIR" in present) lines.push("CODEPLANE_OBJECT_STORE_DIR: set, but CODEPLANE_OBJECT_STORE is s3");
  if (!e.CODEPLANE_S3_BUCKET) lines.push("CODEPLANE_S3_BUCKET: required when CODEPLANE_OBJECT_STORE is s3");
  if ((e.CODEPLANE_S3_ACCESS_KEY_ID === undefined) !== (e.CODEPLANE_S3_SECRET_ACCESS_KEY === undefined)) {
    const missing = e.CODEPLANE_S3_ACCESS_KEY_ID === undefined ? "CODEPLANE_S3_ACCESS_KEY_ID" : "CODEPLANE_S3_SECRET_ACCESS_KEY";
    lines.push(
      `${missing}: required with the other of CODEPLANE_S3_ACCESS_KEY_ID and CODEPLANE_S3_SECRET_ACCESS_KEY (both, or neither for the SDK's default credentials)`,
    );
  }
  if (lines.length) throw problem(lines);
  return {
    kind: "s3",
    s3: {
      endpoint: e.CODEPLANE_S3_ENDPOINT ?? null,
      bucket: e.CODEPLANE_S3_BUCKET!,
      region: e.CODEPLANE_S3_REGION,
      forcePathStyle: e.CODEPLANE_S3_FORCE_PATH_STYLE,
      accessKeyId: e.CODEPLANE_S3_ACCESS_KEY_ID ?? null,
      secretAccessKey: e.CODEPLANE_S3_SECRET_ACCESS_KEY ?? null,
    },
  };
}

export function loadConfig(env: Record<string, string | undefined>): Readonly<Config> {
  // Empty strings mean "unset", as they do for most operators' tooling.
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ""));
  const parsed = envSchema.safeParse(cleaned);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join(".") || "(environment)"}: ${i.message}`);
    throw new ConfigError(`invalid configuration:\n${lines.join("\n")}`);
  }
  const e = parsed.data;
  const fetchesPerAccount = checkCombinations(e);
  const github = loadGitHub(e, e.CODEPLANE_GITHUB_TIMEOUT_SECONDS * 1000);
  const oidc = loadOidc(e);
  const dataDir = path.resolve(e.CODEPLANE_DATA_DIR);
  const currentKey = e.CODEPLANE_ENCRYPTION_KEY ?? embeddedKey(dataDir);
  const keys: Record<string, Buffer> = {};
  for (const [id, k] of Object.entries(e.CODEPLANE_ENCRYPTION_OLD_KEYS)) keys[id] = Buffer.from(k, "base64");
  keys[e.CODEPLANE_ENCRYPTION_KEY_ID] = Buffer.from(currentKey, "base64");

  const config: Config = {
    database: {
      url: e.DATABASE_URL ?? null,
      poolMax: e.CODEPLANE_DB_POOL_MAX,
      preparedStatements: e.CODEPLANE_DB_PREPARED_STATEMENTS,
      migrateOnStart: e.CODEPLANE_MIGRATE_ON_START,
    },
    dataDir,
    http: {
      host: e.CODEPLANE_HOST,
      port: e.PORT,
      gitPort: e.CODEPLANE_GIT_PORT ?? null,
      gitHost: e.CODEPLANE_GIT_HOST ?? e.CODEPLANE_HOST,
      metricsPort: e.CODEPLANE_METRICS_PORT ?? null,
      bodyLimitBytes: e.CODEPLANE_BODY_LIMIT_BYTES,
      trustProxy: e.CODEPLANE_TRUST_PROXY,
      shutdownTimeoutMs: e.CODEPLANE_SHUTDOWN_TIMEOUT_SECONDS * 1000,
    },
    logLevel: e.CODEPLANE_LOG_LEVEL,
    idleMemoryReleaseSeconds: e.CODEPLANE_IDLE_MEMORY_RELEASE_SECONDS,
    encryption: { currentId: e.CODEPLANE_ENCRYPTION_KEY_ID, keys: Object.freeze(keys) },
    rateLimit: {
      requests: e.CODEPLANE_RATE_LIMIT_REQUESTS,
      windowSeconds: e.CODEPLANE_RATE_LIMIT_WINDOW_SECONDS,
      authFailures: e.CODEPLANE_AUTH_FAILURE_LIMIT,
    },
    mcp: {
      maxBatchMessages: e.CODEPLANE_MCP_MAX_BATCH_MESSAGES,
      maxWaitsPerKey: e.CODEPLANE_MCP_MAX_WAITS_PER_KEY,
      maxResultBytes: e.CODEPLANE_MCP_MAX_RESULT_BYTES,
    },
    runEvents: { streamsPerAccount: e.CODEPLANE_RUN_EVENT_STREAMS_PER_ACCOUNT },
    repositories: {
      allowLocal: e.CODEPLANE_ALLOW_LOCAL_REPOSITORIES,
      gitCacheDir: path.resolve(e.CODEPLANE_GIT_CACHE_DIR ?? path.join(dataDir, "git")),
      refreshIntervalSeconds: e.CODEPLANE_GIT_REFRESH_SECONDS,
      commandTimeoutMs: e.CODEPLANE_GIT_TIMEOUT_SECONDS * 1000,
      maxFileBytes: e.CODEPLANE_MAX_FILE_BYTES,
      maxConcurrentFetches: e.CODEPLANE_GIT_MAX_FETCHES,
      maxConcurrentFetchesPerAccount: fetchesPerAccount,
      fetchQueueWaitMs: e.CODEPLANE_GIT_QUEUE_WAIT_SECONDS * 1000,
      maxConcurrentUploads: e.CODEPLANE_GIT_MAX_UPLOADS,
    },
    kubernetes: {
      kubeconfig: e.KUBECONFIG ?? null,
      namespace: e.CODEPLANE_NAMESPACE,
      resourceRetentionSeconds: e.CODEPLANE_RESOURCE_RETENTION_SECONDS,
      leaderLeaseSeconds: e.CODEPLANE_LEADER_LEASE_SECONDS,
    },
    bootstrap: { account: e.CODEPLANE_BOOTSTRAP_ACCOUNT, apiKey: e.CODEPLANE_BOOTSTRAP_API_KEY ?? null },
    components: e.CODEPLANE_COMPONENTS,
    runs: {
      runnerImage: e.CODEPLANE_RUNNER_IMAGE,
      codeplaneImage: e.CODEPLANE_IMAGE,
      imagePullPolicy: e.CODEPLANE_IMAGE_PULL_POLICY,
      imagePullSecrets: e.CODEPLANE_IMAGE_PULL_SECRETS,
      jobTtlSeconds: e.CODEPLANE_JOB_TTL_SECONDS,
      defaultTimeoutSeconds: e.CODEPLANE_RUN_DEFAULT_TIMEOUT_SECONDS,
      maxTimeoutSeconds: e.CODEPLANE_RUN_MAX_TIMEOUT_SECONDS,
      limits: {
        executingPerAccount: e.CODEPLANE_LIMIT_EXECUTING_PER_ACCOUNT,
        waitingPerAccount: e.CODEPLANE_LIMIT_WAITING_PER_ACCOUNT,
        executingTotal: e.CODEPLANE_LIMIT_EXECUTING_TOTAL,
        cpuPerAccount: e.CODEPLANE_LIMIT_CPU_PER_ACCOUNT,
        memoryPerAccount: e.CODEPLANE_LIMIT_MEMORY_PER_ACCOUNT,
        retryAfterSeconds: e.CODEPLANE_LIMIT_RETRY_AFTER_SECONDS,
      },
      kueue: e.CODEPLANE_KUEUE_CLUSTER_QUEUE ? { clusterQueue: e.CODEPLANE_KUEUE_CLUSTER_QUEUE, maxWaitSeconds: e.CODEPLANE_KUEUE_MAX_WAIT_SECONDS } : null,
      outputCollectSeconds: e.CODEPLANE_RUN_OUTPUT_COLLECT_SECONDS,
      logMaxBytes: e.CODEPLANE_LOG_MAX_BYTES,
      metrics: {
        maxSeries: e.CODEPLANE_RUN_METRICS_MAX_SERIES,
        maxPointsPerSeries: e.CODEPLANE_RUN_METRICS_MAX_POINTS,
        maxNameLength: e.CODEPLANE_RUN_METRICS_MAX_NAME_LENGTH,
      },
      computeTypes: e.CODEPLANE_COMPUTE_TYPES,
      warmPools: e.CODEPLANE_WARM_POOLS,
      internalUrl: e.CODEPLANE_INTERNAL_URL ?? derivedInternalUrl(e.CODEPLANE_GIT_HOST ?? e.CODEPLANE_HOST, e.CODEPLANE_GIT_PORT ?? e.PORT),
      egress: {
        mode: e.CODEPLANE_RUN_EGRESS,
        allow: e.CODEPLANE_RUN_EGRESS_ALLOW,
        clusterCidrs: e.CODEPLANE_RUN_EGRESS_CLUSTER_CIDRS,
        policyName: e.CODEPLANE_RUN_EGRESS_POLICY ?? null,
        gitPods: e.CODEPLANE_RUN_EGRESS_GIT_PODS && { ...e.CODEPLANE_RUN_EGRESS_GIT_PODS, port: e.CODEPLANE_GIT_PORT ?? e.PORT },
      },
      preprocessEnv: e.CODEPLANE_RUN_PREPROCESS_ENV,
    },
    environments: {
      // Unset: the runner image alone, which holds Python 3.11 and Node 24 as codeplane's own does.
      catalog: e.CODEPLANE_ENVIRONMENT_IMAGES ?? [{ image: e.CODEPLANE_RUNNER_IMAGE, toolchains: { python: "3.11", node: "24" }, packages: [] }],
      allowedRegistries: e.CODEPLANE_ENVIRONMENT_ALLOWED_REGISTRIES,
      buildTimeoutSeconds: e.CODEPLANE_ENVIRONMENT_BUILD_TIMEOUT_SECONDS,
      maxArchiveBytes: e.CODEPLANE_ENVIRONMENT_MAX_BYTES,
      maxCacheBytes: e.CODEPLANE_ENVIRONMENT_CACHE_MAX_BYTES,
      uploadTimeoutMs: e.CODEPLANE_ENVIRONMENT_UPLOAD_TIMEOUT_SECONDS * 1000,
    },
    analyses: { timeoutSeconds: e.CODEPLANE_ANALYSIS_TIMEOUT_SECONDS, computeType: e.CODEPLANE_ANALYSIS_COMPUTE_TYPE },
    github: github.github,
    githubMissing: github.missing,
    publicUrl: e.CODEPLANE_PUBLIC_URL ?? null,
    webhookLeaseSeconds: e.CODEPLANE_WEBHOOK_LEASE_SECONDS,
    notifications: {
      maxEndpointsPerAccount: e.CODEPLANE_NOTIFICATIONS_MAX_ENDPOINTS,
      timeoutMs: e.CODEPLANE_NOTIFICATIONS_TIMEOUT_SECONDS * 1000,
      concurrency: e.CODEPLANE_NOTIFICATIONS_CONCURRENCY,
      maxResponseBytes: e.CODEPLANE_NOTIFICATIONS_MAX_RESPONSE_BYTES,
      retryWindowSeconds: e.CODEPLANE_NOTIFICATIONS_RETRY_HOURS * 3600,
      retryBaseSeconds: e.CODEPLANE_NOTIFICATIONS_RETRY_BASE_SECONDS,
      retryMaxDelaySeconds: e.CODEPLANE_NOTIFICATIONS_RETRY_MAX_DELAY_SECONDS,
      retentionDays: e.CODEPLANE_NOTIFICATIONS_RETENTION_DAYS,
    },
    webhookIntake: webhookIntake(e),
    oauth: {
      accessTokenSeconds: e.CODEPLANE_OAUTH_ACCESS_TOKEN_SECONDS,
      refreshTokenSeconds: e.CODEPLANE_OAUTH_REFRESH_TOKEN_SECONDS,
      sessionSeconds: e.CODEPLANE_SESSION_SECONDS,
      rateLimitRequests: e.CODEPLANE_OAUTH_RATE_LIMIT_REQUESTS,
      allowLocalClientMetadata: e.CODEPLANE_OAUTH_ALLOW_LOCAL_CLIENT_METADATA,
      clientMetadata: {
        maxFetches: e.CODEPLANE_OAUTH_CLIENT_METADATA_MAX_FETCHES,
        failureSeconds: e.CODEPLANE_OAUTH_CLIENT_METADATA_FAILURE_SECONDS,
        unusedDays: e.CODEPLANE_OAUTH_CLIENT_METADATA_UNUSED_DAYS,
      },
      oidc,
      apiKeySignIn: oidc ? e.CODEPLANE_OIDC_API_KEY_SIGN_IN : true,
    },
    outputs: {
      maxFileBytes: e.CODEPLANE_OUTPUT_MAX_FILE_BYTES,
      maxRunBytes: e.CODEPLANE_OUTPUT_MAX_RUN_BYTES,
      maxRunFiles: e.CODEPLANE_OUTPUT_MAX_RUN_FILES,
      maxAccountBytes: e.CODEPLANE_OUTPUT_MAX_ACCOUNT_BYTES,
      maxAccountFiles: e.CODEPLANE_OUTPUT_MAX_ACCOUNT_FILES,
      retentionDays: e.CODEPLANE_OUTPUT_RETENTION_DAYS,
    },
    objectStore: objectStore(e, cleaned, dataDir),
  };
  return deepFreeze(config);
}

function deepFreeze<T>(value: T): Readonly<T> {
  if (value && typeof value === "object" && !Buffer.isBuffer(value)) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}
