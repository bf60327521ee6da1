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
//
// --no-allocation-site-pretenuring: V8 watches where objects are made and,
// when most of one place's objects survive a young-generation collection,
// makes that place's objects in the old generation from then on. A request's
// objects live a millisecond, but the decision is taken on a sample and kept:
// under load it settled on the array `pg` collects a query's rows in (when the
// query is awaited as a promise, as Kysely does), and from then on each row
// the array held was kept alive by it through every young collection and
// promoted, to be freed only by full collections. Measured on
// GET /v1/repositories with --trace-gc (5 s under load, 10 connections): the
// bare node:http + pg server awaiting pg's promise promoted 12 KiB a request
// and spent 438 ms in scavenges; with the flag, nothing and 129 ms, as with
// pg's callback. A service's objects live for a request, so a guess that they
// will live long is the wrong one here, wherever in its libraries it is made.
export const SERVER_NODE_FLAGS: readonly string[] = ["--max-semi-space-size=8", "--no-allocation-site-pretenuring"];
