import type { Migration, MigrationProvider } from "kysely/migration";
import * as m0001 from "./0001_initial.ts";
import * as m0002 from "./0002_runs.ts";
import * as m0003 from "./0003_analyses.ts";
import * as m0004 from "./0004_installation.ts";
import * as m0005 from "./0005_api_key_parents.ts";
import * as m0006 from "./0006_checkout_tokens.ts";
import * as m0007 from "./0007_github_integrations.ts";
import * as m0008 from "./0008_github_webhooks.ts";
import * as m0009 from "./0009_oauth.ts";
import * as m0010 from "./0010_run_list_indexes.ts";
import * as m0011 from "./0011_api_key_notify.ts";
import * as m0012 from "./0012_environments.ts";
import * as m0013 from "./0013_workload_transitions.ts";
import * as m0014 from "./0014_run_timeline.ts";
import * as m0015 from "./0015_environment_pins.ts";
import * as m0016 from "./0016_notifications.ts";
import * as m0017 from "./0017_results.ts";
import * as m0018 from "./0018_run_outputs.ts";
import * as m0019 from "./0019_limits.ts";
import * as m0020 from "./0020_warm_pools.ts";
import * as m0023 from "./0023_log_groups.ts";
import * as m0024 from "./0024_run_attempts.ts";
import * as m0025 from "./0025_run_check_runs.ts";
import * as m0026 from "./0026_run_changes.ts";
import * as m0027 from "./0027_account_cpu_memory.ts";
import * as m0028 from "./0028_queued_runs.ts";
import * as m0029 from "./0029_warm_pool_diagnostics.ts";

// Migrations are imported statically, not read from a folder at run time, so
// the compiled binary and the container image carry them with no file lookup.
const migrations: Record<string, Migration> = {
  "0001_initial": m0001,
  "0002_runs": m0002,
  "0003_analyses": m0003,
  "0004_installation": m0004,
  "0005_api_key_parents": m0005,
  "0006_checkout_tokens": m0006,
  "0007_github_integrations": m0007,
  "0008_github_webhooks": m0008,
  "0009_oauth": m0009,
  "0010_run_list_indexes": m0010,
  "0011_api_key_notify": m0011,
  "0012_environments": m0012,
  "0013_workload_transitions": m0013,
  "0014_run_timeline": m0014,
  "0015_environment_pins": m0015,
  "0016_notifications": m0016,
  "0017_results": m0017,
  "0018_run_outputs": m0018,
  "0019_limits": m0019,
  "0020_warm_pools": m0020,
  "0023_log_groups": m0023,
  "0024_run_attempts": m0024,
  "0025_run_check_runs": m0025,
  "0026_run_changes": m0026,
  "0027_account_cpu_memory": m0027,
  "0028_queued_runs": m0028,
  "0029_warm_pool_diagnostics": m0029,
};

export const migrationProvider: MigrationProvider = {
  getMigrations: async () => migrations,
};
