// Analyzer benchmark: `make bench-analyze` (or `npm run bench:analyze`).
//
// Generates a large repository (BENCH_FILES files, about BENCH_LINES lines in
// all: Python with argparse and environment variables, JavaScript, Go,
// Markdown, a few packages, Makefiles and shell scripts), a repository of one
// short shell script, and this project's own
// tracked files (git archive HEAD). For each it runs, in a fresh child process
// so peak memory is the analyzer's own:
//   - the analyzer (codeplane analyze), and
//   - the baseline: the same walk reading every file and counting its lines,
//     which is the least any analyzer that looks at every file must do.
// Prints wall time, files/s, lines/s, peak RSS, and the ratio analyzer / baseline.
// Peak RSS is the larger of the process's own peak and the peak of the memory
// of it and its child processes together (their proportional set sizes,
// sampled every 10 ms from /proc), since the analyzer parses shell scripts in
// a child process and a pod's memory limit counts every process in it.
import { execFileSync, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { ANALYZER_NODE_FLAGS } from "../src/node-flags.ts";
const PARALLEL_MIN_FILES = 1000; // src/analyze.ts; not imported, so the parent process stays light

const FILES = Number(process.env.BENCH_FILES ?? 20_000);
const LINES = Number(process.env.BENCH_LINES ?? 2_000_000);
const here = import.meta.dirname;
/** The repository (packages/analyzer/bench/../../..), whose tracked files are the third repository measured. */
const REPOSITORY = path.join(here, "..", "..", "..");

interface Measure {
  ms: number;
  maxRssMiB: number;
  files: number;
  lines: number;
  experiments?: number;
  envVars?: number;
}

async function child(mode: string, dir: string, threads: string): Promise<void> {
  const started = performance.now();
  let out: Omit<Measure, "ms" | "maxRssMiB">;
  if (mode === "analyzer") {
    const { analyzeRepository } = await import("../src/analyze.ts");
    const r = await analyzeRepository(dir, { timeBudgetMs: 30 * 60_000, parallel: threads === "2", onProgress: (m) => process.stderr.write(`${m}\n`) });
    out = {
      files: r.stats.files_scanned,
      lines: r.repo_summary.languages.reduce((n, l) => n + l.lines, 0),
      experiments: r.experiments.length,
      envVars: r.env_vars.length,
    };
  } else {
    const { walk, FileReader, countLines } = await import("../src/files.ts");
    const listing = walk(dir);
    const reader = new FileReader(dir);
    let lines = 0;
    for (const f of listing.files) lines += countLines(reader.readText(f) ?? "");
    out = { files: listing.files.length, lines };
  }
  const ms = performance.now() - started;
  process.stdout.write(JSON.stringify({ ...out, ms, maxRssMiB: process.resourceUsage().maxRSS / 1024 }));
}

/** Every descendant of pid, from /proc (Linux); empty elsewhere. */
function descendants(pid: number): number[] {
  const children = new Map<number, number[]>();
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return [];
  }
  for (const e of entries) {
    if (!/^[0-9]+$/.test(e)) continue;
    try {
      const stat = readFileSync(`/proc/${e}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(e)]);
    } catch {
      // gone already
    }
  }
  const out: number[] = [];
  const visit = (p: number) => {
    for (const c of children.get(p) ?? []) {
      out.push(c);
      visit(c);
    }
  };
  visit(pid);
  return out;
}

/** A process's proportional set size: its pages, shared ones (the node binary) split among their users, as a cgroup counts them once. */
function pssMiB(pid: number): number {
  try {
    const m = /^Pss:\s+([0-9]+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, "utf8"));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

async function measure(mode: "analyzer" | "baseline", dir: string, threads: 1 | 2 = 1): Promise<Measure> {
  // The analyzer with the node flags `codeplane analyze` gives itself (as in analysis pods).
  const flags = mode === "analyzer" ? ANALYZER_NODE_FLAGS : [];
  const child = spawn(process.execPath, [...flags, path.join(here, "analyze.ts"), "--child", mode, dir, String(threads)], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (c: Buffer) => (stdout += c.toString("utf8")));
  child.stderr.on("data", (c: Buffer) => (stderr += c.toString("utf8")));
  let treePeak = 0;
  const sampler = setInterval(() => {
    const pids = [child.pid!, ...descendants(child.pid!)];
    treePeak = Math.max(
      treePeak,
      pids.reduce((n, p) => n + pssMiB(p), 0),
    );
  }, 10);
  const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
  clearInterval(sampler);
  if (code !== 0) throw new Error(`${mode} failed: ${stderr}`);
  if (process.env.BENCH_VERBOSE) process.stderr.write(stderr);
  const m = JSON.parse(stdout) as Measure;
  return { ...m, maxRssMiB: Math.max(m.maxRssMiB, treePeak) };
}

function generate(dir: string): void {
  const linesPerFile = Math.max(10, Math.round(LINES / FILES));
  const body = (n: number, line: (i: number) => string) => Array.from({ length: n }, (_, i) => line(i)).join("\n") + "\n";
  for (let i = 0; i < FILES; i++) {
    const pkg = path.join(dir, `pkg${Math.floor(i / 200)}`, `mod${Math.floor(i / 20) % 10}`);
    mkdirSync(pkg, { recursive: true });
    const kind = i % 10;
    const filler = linesPerFile - 12;
    if (kind < 5) {
      const main = i % 50 === 0;
      writeFileSync(
        path.join(pkg, `m${i}.py`),
        `"""Module ${i}."""\nimport os\nimport argparse\n\n` +
          body(filler, (k) => `def f${k}(x):\n    return x * ${k} + len(os.environ.get("OPT_${k % 7}", ""))`.split("\n")[k % 2]!) +
          `TOKEN = os.environ["TOKEN_${i % 13}"]\n` +
          (main
            ? `if __name__ == "__main__":\n    p = argparse.ArgumentParser(description="job ${i}")\n    p.add_argument("--n", type=int, default=${i})\n    p.add_argument("--mode", choices=["a", "b"], default="a")\n    p.parse_args()\n`
            : "\n"),
      );
    } else if (kind < 8) {
      writeFileSync(
        path.join(pkg, `m${i}.js`),
        `"use strict";\n` + body(filler + 8, (k) => `const v${k} = process.env.JS_${k % 5} ?? "${k}";`) + `module.exports = { v0 };\n`,
      );
    } else if (kind === 8) {
      writeFileSync(path.join(pkg, `m${i}.go`), `package mod\n\nimport "os"\n\n` + body(filler + 6, (k) => `var V${k} = os.Getenv("GO_${k % 3}")`) + "\n");
    } else {
      writeFileSync(path.join(pkg, `n${i}.md`), `# Note ${i}\n\n` + body(filler + 10, (k) => `Line ${k} of a note about module ${i}.`));
    }
    if (i % 1000 === 0) {
      writeFileSync(path.join(pkg, "package.json"), JSON.stringify({ name: `p${i}`, scripts: { start: "node index.js", test: "node --test" } }));
      writeFileSync(path.join(pkg, "Makefile"), `EPOCHS ?= 3\n.PHONY: train\ntrain: ## train it\n\tpython3 m${i}.py --n $(EPOCHS)\n`);
      writeFileSync(path.join(pkg, "run.sh"), `#!/bin/sh\n# Runs job ${i}.\nset -eu\nexec python3 m${i}.py --n "\${1:-${i}}" --mode "\${MODE:-a}"\n`);
    }
  }
}

function row(name: string, a: Measure, b: Measure, a2?: Measure): string {
  const fps = (m: Measure) => Math.round((m.files / m.ms) * 1000);
  const analyzer = (label: string, m: Measure) =>
    `  ${label}  ${(m.ms / 1000).toFixed(2)} s  ${fps(m)} files/s  ${Math.round((m.lines / m.ms) * 1000)} lines/s  peak RSS ${m.maxRssMiB.toFixed(0)} MiB`;
  return [
    `${name}: ${a.files} files, ${a.lines} lines; ${a.experiments} experiments, ${a.envVars} env vars`,
    analyzer("analyzer ", a),
    ...(a2 ? [`${analyzer("2 threads", a2)}  (--threads 2, as on a pod allowed two CPUs)`] : []),
    `  baseline  ${(b.ms / 1000).toFixed(2)} s  ${fps(b)} files/s  ${Math.round((b.lines / b.ms) * 1000)} lines/s  peak RSS ${b.maxRssMiB.toFixed(0)} MiB  (walk + read + count lines)`,
    `  ratio     time ${(a.ms / b.ms).toFixed(2)}x the baseline, memory ${(a.maxRssMiB / b.maxRssMiB).toFixed(2)}x`,
  ].join("\n");
}

async function main(): Promise<void> {
  const work = mkdtempSync(path.join(tmpdir(), "cp-bench-analyze-"));
  try {
    const big = path.join(work, "generated");
    mkdirSync(big);
    const t = performance.now();
    generate(big);
    process.stdout.write(`generated ${FILES} files in ${((performance.now() - t) / 1000).toFixed(1)} s\n`);
    // The smallest repository that parses anything: one short shell script.
    const tiny = path.join(work, "tiny");
    mkdirSync(tiny);
    writeFileSync(path.join(tiny, "run.sh"), '#!/bin/sh\npython3 train.py --epochs "${EPOCHS:-3}" "$@"\n');
    const self = path.join(work, "self");
    mkdirSync(self);
    execFileSync("sh", ["-c", `git -C "${REPOSITORY}" archive HEAD | tar -x -C "${self}"`]);
    for (const [name, dir] of [
      ["generated", big],
      ["one shell script", tiny],
      ["this project", self],
    ] as const) {
      // Baseline first so the analyzer does not profit from a cache the baseline warmed... and
      // then again after, so neither does the baseline: the faster of its two runs counts.
      const b1 = await measure("baseline", dir);
      const a = await measure("analyzer", dir);
      // A worker thread only starts on large repositories: the second shape matters there.
      const a2 = a.files >= PARALLEL_MIN_FILES ? await measure("analyzer", dir, 2) : undefined;
      const b2 = await measure("baseline", dir);
      process.stdout.write(`${row(name, a, b1.ms <= b2.ms ? b1 : b2, a2)}\n`);
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

if (process.argv[2] === "--child") await child(process.argv[3]!, process.argv[4]!, process.argv[5]!);
else await main();
