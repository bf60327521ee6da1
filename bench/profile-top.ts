// Summarises a V8 .cpuprofile (BENCH_PROFILE_DIR): the functions with the most
// self time, and the packages/files they come from, so a profile can be read
// without DevTools. Usage: node bench/profile-top.ts <file.cpuprofile> [rows]
import { readFileSync } from "node:fs";

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
const file = process.argv[2];
if (!file) throw new Error("usage: node bench/profile-top.ts <file.cpuprofile> [rows]");
const rows = Number(process.argv[3] ?? 30);
const profile = JSON.parse(readFileSync(file, "utf8")) as { nodes: Node[]; samples: number[]; timeDeltas: number[] };
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const selfUs = new Map<number, number>();
profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
const total = [...selfUs.values()].reduce((a, b) => a + b, 0);

const where = (url: string) => {
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (m) return m[1]!;
  const s = /\/(src\/.*|bench\/.*)$/.exec(url);
  return s ? s[1]! : url.replace(/^node:/, "node:") || "(native)";
};
const fns = new Map<string, number>();
const places = new Map<string, number>();
for (const [id, us] of selfUs) {
  const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
  const w = where(url);
  const key = `${functionName || "(anonymous)"}  ${w}${url ? `:${lineNumber + 1}` : ""}`;
  fns.set(key, (fns.get(key) ?? 0) + us);
  places.set(w, (places.get(w) ?? 0) + us);
}
const show = (title: string, m: Map<string, number>) => {
  console.log(`\n${title}`);
  for (const [k, us] of [...m].sort((a, b) => b[1] - a[1]).slice(0, rows)) {
    console.log(`${((100 * us) / total).toFixed(1).padStart(5)}%  ${(us / 1000).toFixed(0).padStart(7)} ms  ${k}`);
  }
};
console.log(`total ${(total / 1e6).toFixed(1)} s sampled`);
show("self time by function", fns);
show("self time by package / file", places);
