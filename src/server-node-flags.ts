// V8 settings the service's process (`codeplane serve`) runs with, which only
// node's command line can give: bin/codeplane.mjs starts again with them, in
// place, when they are missing. No imports: it is read before anything loads.
//
// --max-semi-space-size=8: V8 lets the young generation grow to 3 x 16 MiB
// under load and keeps it once grown, so an idle service that had served a
// few hundred requests held it all. At 8 MiB, measured with
// bench/idle-memory.ts (Postgres configured, after 300 requests): 208 -> 179
// MiB resident for the API alone (1 MiB gave 168 MiB, but collects young
// objects several times as often under load).
export const SERVER_NODE_FLAGS: readonly string[] = ["--max-semi-space-size=8"];
