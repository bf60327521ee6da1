// Splits a V8 .cpuprofile (BENCH_PROFILE_DIR) of the list benchmark into the
// categories of issue 36's cost table (Koa dispatch and middleware, the key
// check and its barrier, validation, Kysely, pg's parsing, JSON encoding,
// logging, metrics, socket writes, GC...) and, given the main-thread CPU per
// request the same run measured, the microseconds a request spends in each.
// A sample goes to the first category found walking its stack from the leaf
// up, so a native leaf (a socket write, a string decode) is charged to the
// code that asked for it. Idle time and module loading are left out.
//
//   node bench/profile-categories.ts <file.cpuprofile> [main-thread µs/request]
import { readFileSync } from "node:fs";

interface Node {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}

const file = process.argv[2];
if (!file) throw new Error("usage: node bench/profile-categories.ts <file.cpuprofile> [main-thread µs/request]");
const perRequest = process.argv[3] ? Number(process.argv[3]) : null;
const profile = JSON.parse(readFileSync(file, "utf8")) as { nodes: Node[]; samples: number[]; timeDeltas: number[] };
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

const SOCKET_WRITES = new Set(["writeUtf8String", "writev", "writeBuffer", "writeLatin1String", "writeAsciiString"]);

/** Categories named by the file a frame runs in, first match wins. */
const BY_FILE: [RegExp, string][] = [
  [/src\/db\/notifications/, "key check: barrier round trip"],
  [/src\/domain\/auth|src\/api\/middleware\/auth/, "key check: token, cache, principal"],
  [/node_modules\/kysely/, "Kysely"],
  [/node_modules\/zod|src\/api\/validation/, "validation (zod)"],
  [/src\/domain\/(repositories|shared)/, "page building (toRepository, iso)"],
  [/pino|sonic-boom|src\/logger/, "logging"],
  [/prom-client|src\/api\/metrics/, "metrics"],
  [/security-headers/, "security headers"],
  [/request-context/, "request context (id, timing, log line)"],
];

/** The category of one frame, or null to look at its caller. */
function frameCategory(fn: string, url: string, leaf: boolean, writeLeaf: boolean): string | null {
  if (leaf && fn === "(garbage collector)") return "GC (on the main thread)";
  if (leaf && fn === "(idle)") return "idle";
  if (leaf && fn === "(program)") return "(program): native, unattributed";
  if (/node:internal\/(modules|bootstrap)|amaro|wasm:/.test(url)) return "startup";
  const pg = /node_modules\/(pg|pg-protocol|pg-pool|pg-types|postgres-[a-z]+|pg-int8)\//.test(url) || /src\/db\/(timestamp-parser|named-statements)/.test(url);
  if (pg) {
    if (writeLeaf) return "socket writes to Postgres (syscalls, loopback)";
    if (/parser|result|postgres-|pg-types|timestamp-parser/.test(url) || /_handleDataRow|parseRow|addFields/.test(fn)) return "pg: protocol parse, rows, types";
    return "pg: client, pool, query send";
  }
  for (const [re, category] of BY_FILE) if (re.test(url)) return category;
  if (/bench\/processes/.test(url)) return writeLeaf ? "socket writes of the response" : "handler (reference: rows to JSON)";
  if (/node_modules\/koa\//.test(url) && fn === "respond") return writeLeaf ? "socket writes of the response" : "JSON encoding and response (Koa respond)";
  if (
    /node_modules\/(koa|@koa|koa-compose|delegates|on-finished|ee-first|statuses|only|content-type|type-is|mime|accepts|negotiator|vary|fresh|parseurl|koa-body|cookies|http-errors|encodeurl|escape-html)/.test(
      url,
    ) ||
    /src\/api\//.test(url)
  )
    return writeLeaf ? "socket writes of the response" : "Koa dispatch, router and middleware";
  // Anything else (node's http, net and streams among them): its caller says whose it is.
  return null;
}

const totals = new Map<string, number>();
// BENCH_PROFILE_DETAIL=<part of a category's name>: that category's leaf functions too.
const detail = process.env.BENCH_PROFILE_DETAIL;
const detailed = new Map<string, number>();
profile.samples.forEach((id, i) => {
  const us = profile.timeDeltas[i] ?? 0;
  const leaf = byId.get(id)!;
  const writeLeaf = SOCKET_WRITES.has(leaf.callFrame.functionName);
  let cat: string | null = null;
  let firstNodeHttp: string | null = null;
  for (let n: number | undefined = id, first = true; n !== undefined; n = parent.get(n), first = false) {
    const { functionName, url } = byId.get(n)!.callFrame;
    if (!firstNodeHttp && /^node:(_http|net|internal\/(streams|stream_base|http))/.test(url)) firstNodeHttp = url;
    cat = frameCategory(functionName, url, first, writeLeaf);
    if (cat?.startsWith("pg") || cat?.startsWith("socket writes to Postgres")) {
      // The barrier's round trip is a pg query too: charged to the key check when it is on the stack.
      for (let m = parent.get(n); m !== undefined; m = parent.get(m))
        if (/src\/db\/notifications/.test(byId.get(m)!.callFrame.url)) cat = "key check: barrier round trip";
    }
    if (cat) break;
  }
  cat ??= writeLeaf ? "socket writes of the response" : firstNodeHttp ? "node:http and net (parse, events)" : "other (node internals, timers, microtasks)";
  totals.set(cat, (totals.get(cat) ?? 0) + us);
  if (detail && cat.includes(detail)) {
    const key = `${leaf.callFrame.functionName || "(anonymous)"} ${leaf.callFrame.url.replace(/.*node_modules\//, "")}`;
    detailed.set(key, (detailed.get(key) ?? 0) + us);
  }
});

const skipped = new Set(["idle", "startup"]);
const busy = [...totals].filter(([k]) => !skipped.has(k)).reduce((a, [, v]) => a + v, 0);
console.log(
  `${file}\nbusy ${(busy / 1e6).toFixed(1)} s sampled (idle ${((totals.get("idle") ?? 0) / 1e6).toFixed(1)} s, startup ${((totals.get("startup") ?? 0) / 1e6).toFixed(1)} s left out)`,
);
for (const [k, v] of [...totals].filter(([k]) => !skipped.has(k)).sort((a, b) => b[1] - a[1])) {
  const share = v / busy;
  console.log(`${(100 * share).toFixed(1).padStart(5)}%${perRequest ? `  ${(share * perRequest).toFixed(0).padStart(4)} µs` : ""}  ${k}`);
}
if (detail) {
  console.log(`\nleaf functions in "${detail}"`);
  for (const [k, v] of [...detailed].sort((a, b) => b[1] - a[1]).slice(0, 40)) {
    console.log(`${((100 * v) / busy).toFixed(2).padStart(6)}%${perRequest ? `  ${((v / busy) * perRequest).toFixed(1).padStart(5)} µs` : ""}  ${k}`);
  }
}
