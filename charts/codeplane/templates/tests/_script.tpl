{{- /*
What the `helm test` pod runs (node, in the API's own image). Through the
Service, as any client in the cluster would: GET /readyz; then, with
tests.repositoryUrl, it registers that repository for the bootstrap key's
account (once: a name derived from the URL), starts a one-line run and
follows its log stream (Server-Sent Events, resuming with ?after= if the
stream breaks) to `end`, which must say completed with exit code 0 after the
line was streamed. Exit 0 on success, 1 with the reason otherwise. Go
template: no double braces below.
*/ -}}
{{- define "codeplane.testScript" -}}
import { createHash } from "node:crypto";

const base = process.env.CODEPLANE_URL;
const key = process.env.CODEPLANE_API_KEY ?? "";
const repoUrl = process.env.TEST_REPOSITORY_URL ?? "";
const started = Date.now();
const deadline = started + Number(process.env.TEST_TIMEOUT_SECONDS) * 1000;
const log = (m) => console.log(`[helm test] ${m}`);
const fail = (m) => {
  console.log(`[helm test] FAILED: ${m}`);
  process.exit(1);
};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const left = () => deadline - Date.now();
const reason = (err) => String(err?.cause?.code ?? err?.cause?.message ?? err?.message ?? err);

async function call(path, opts = {}) {
  const res = await fetch(base + path, {
    method: opts.json === undefined ? "GET" : "POST",
    headers: { ...(key && { authorization: `Bearer ${key}` }), ...(opts.json !== undefined && { "content-type": "application/json" }) },
    body: opts.json === undefined ? undefined : JSON.stringify(opts.json),
    signal: AbortSignal.timeout(Math.max(1_000, Math.min(30_000, left()))),
  });
  const text = await res.text();
  let body = text;
  try {
    body = JSON.parse(text);
  } catch {}
  return { status: res.status, body };
}
const show = (r) => `${r.status} ${typeof r.body === "string" ? r.body : JSON.stringify(r.body)}`.slice(0, 600);

// 1. /readyz through the Service. A new pod's first connections may wait
//    until the network plugin knows it, so refusals are retried.
let ready = { status: 0, body: "" };
for (;;) {
  try {
    ready = await call("/readyz");
    if (ready.status === 200) break;
  } catch (err) {
    ready = { status: 0, body: reason(err) };
  }
  if (left() <= 0) fail(`GET ${base}/readyz: ${show(ready)}`);
  await sleep(1_000);
}
log(`GET ${base}/readyz: ${show(ready)}`);
if (!repoUrl) {
  log("no run: tests.repositoryUrl is empty (set it to a repository the cluster can clone for a run to its end)");
  process.exit(0);
}

// 2. The repository, registered once for the key's account.
const name = `helm-test-${createHash("sha256").update(repoUrl).digest("hex").slice(0, 12)}`;
let repo;
const created = await call("/v1/repositories", { json: { url: repoUrl, name } });
if (created.status === 201) {
  repo = created.body;
} else if (created.status === 409) {
  let cursor = null;
  do {
    const page = await call(`/v1/repositories?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
    if (page.status !== 200) fail(`GET /v1/repositories: ${show(page)}`);
    repo = page.body.items.find((r) => r.name === name);
    cursor = page.body.next_cursor;
  } while (!repo && cursor);
  if (!repo) fail(`POST /v1/repositories: ${show(created)}, and no repository named ${name}`);
} else {
  fail(`POST /v1/repositories ${repoUrl}: ${show(created)}`);
}
const ref = process.env.TEST_REF || repo.default_branch || "HEAD";
log(`repository ${repo.id}: ${repoUrl} at ${ref}`);

// 3. A run to its end, streamed.
const marker = `codeplane helm test ${process.env.HOSTNAME ?? ""}`.trim();
const timeout = Math.max(10, Math.floor(left() / 1000));
let run;
for (;;) {
  run = await call(`/v1/repositories/${repo.id}/${encodeURIComponent(ref)}/runs`, { json: { command: ["sh", "-c", `echo "${marker}"`], timeout_seconds: timeout } });
  if (run.status === 201) break;
  if (run.status !== 503 || left() <= 0) fail(`POST /v1/repositories/${repo.id}/${ref}/runs: ${show(run)}`);
  await sleep(2_000);
}
const runId = run.body.run_id;
log(`run ${runId}: ${run.body.status}`);

const lines = [];
let after = 0;
let end = null;
while (!end) {
  if (left() <= 0) fail(`run ${runId} did not end within tests.timeoutSeconds; lines so far: ${JSON.stringify(lines)}`);
  let res;
  try {
    res = await fetch(`${base}/v1/runs/${runId}/logs/stream?after=${after}`, {
      headers: { authorization: `Bearer ${key}`, accept: "text/event-stream" },
      signal: AbortSignal.timeout(left()),
    });
    if (res.status !== 200) fail(`GET /v1/runs/${runId}/logs/stream: ${res.status} ${await res.text()}`);
    const decoder = new TextDecoder();
    let buf = "";
    read: for await (const chunk of res.body) {
      buf += decoder.decode(chunk, { stream: true }).replaceAll("\r\n", "\n");
      for (let i = buf.indexOf("\n\n"); i >= 0; i = buf.indexOf("\n\n")) {
        const block = buf.slice(0, i);
        buf = buf.slice(i + 2);
        let event = "message";
        let data = "";
        for (const l of block.split("\n")) {
          if (l.startsWith("event:")) event = l.slice(6).trim();
          else if (l.startsWith("data:")) data += l.slice(5).trim();
        }
        if (!data) continue;
        const d = JSON.parse(data);
        if (event === "stdout" || event === "stderr") {
          lines.push(d.line);
          after = d.seq;
          log(`${event}: ${d.line}`);
        } else if (event === "status") {
          log(`status: ${d.status}`);
        } else if (event === "end") {
          end = d;
          break read;
        }
      }
    }
  } catch (err) {
    log(`stream interrupted (${reason(err)}); resuming after line ${after}`);
    await sleep(1_000);
  }
}
log(`end: ${JSON.stringify(end)}`);
if (end.status !== "completed" || end.exit_code !== 0) fail(`run ${runId} ended ${JSON.stringify(end)}; lines: ${JSON.stringify(lines)}`);
if (!lines.some((l) => l.trim() === marker)) fail(`run ${runId} completed, but its stream lacked "${marker}": ${JSON.stringify(lines)}`);
log(`ok: ready, and run ${runId} completed with exit code 0 in ${((Date.now() - started) / 1000).toFixed(1)} s, its output streamed`);
{{- end -}}
