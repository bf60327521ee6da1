// Runs: the list (live through GET /v1/runs/events, runsfeed.ts), and the run page with its phases, its
// live log and its environment's install output.

import { api, q, seg, type Page } from "./api.ts";
import { attemptNote, attemptsKey, attemptsSection, type RunAttempt } from "./attempts.ts";
import { fmtTime, h, onLeave, show, statusBadge, statusIcon, timeAgo, viewError } from "./dom.ts";
import { LogView } from "./logview.ts";
import { FINISHED, formatSeconds, runPhases, type TimelineEvent } from "./phases.ts";
import { elapsed, phaseSection, tick } from "./phaseview.ts";
import { experimentHref } from "./experiment.ts";
import { RunResults } from "./results.ts";
import { newerRun, withStatus } from "./runstate.ts";
import { followRuns } from "./runsfeed.ts";
import { SetupLog } from "./setuplog.ts";

interface Run {
  run_id: string;
  repository_id: string;
  commit_hash: string;
  status: string;
  experiment_id: string | null;
  compute_type: string;
  run_config: { command: string[]; parameters: Record<string, unknown>; timeout_seconds: number; retries?: number };
  attempts?: RunAttempt[];
  exit_code: number | null;
  error: string | null;
  duration_seconds: number | null;
  start_time: string | null;
  close_time: string | null;
  created_at: string;
  environment: { key: string | null; image: string; cache: "hit" | "built" | null; warnings: string[] } | null;
  timeline?: TimelineEvent[];
  rerun_of?: string | null;
}

/** The runs the list shows: the newest of its filters. */
const LIST_LIMIT = 50;
const STATUSES = ["pending", "preprocessing", "running", "completed", "failed", "cancelled"];
/**
 * How often an unfinished run is read again. Its timeline's steps come on the log stream
 * (`event: timeline`) and its status changes as status events (each of which reads it again);
 * this only catches what a broken stream missed.
 */
const RUN_POLL_MS = 15_000;

export async function runsPage(query: URLSearchParams): Promise<void> {
  const status = h(
    "select",
    { id: "filter-status" },
    h("option", { value: "" }, "any"),
    ...STATUSES.map((s) => h("option", { value: s, selected: query.get("status") === s }, s)),
  );
  const commit = query.get("commit") ?? "";
  const body = h("tbody", { id: "runs" });
  // Repository names by id (the account's first 100; others show their id's end).
  const names = new Map<string, string>();
  await api<Page<{ id: string; name: string }>>("/v1/repositories?limit=100")
    .then((p) => p.items.forEach((r) => names.set(r.id, r.name)))
    .catch(() => {});
  const repoSelect = h(
    "select",
    { id: "filter-repository" },
    h("option", { value: "" }, "any"),
    ...[...names].map(([id, name]) => h("option", { value: id, selected: query.get("repository_id") === id }, name)),
  );
  const reqRepo = query.get("repository_id");
  if (reqRepo && !names.has(reqRepo)) repoSelect.append(h("option", { value: reqRepo, selected: true }, reqRepo));
  // One commit's runs (from an analysis or a commit) come from that commit's list.
  const listPath = () =>
    commit && repoSelect.value
      ? `/v1/repositories/${seg(repoSelect.value)}/${seg(commit)}/runs${q({ limit: LIST_LIMIT, status: status.value })}`
      : `/v1/runs${q({ limit: LIST_LIMIT, status: status.value, repository_id: repoSelect.value })}`;
  // The rows shown, newest first (ids are time-ordered): the list's read, then the stream's changes.
  let shown: Run[] = [];
  const draw = () => {
    const now = Date.now();
    body.replaceChildren(...shown.map((r) => runRow(r, names, now)));
    if (!shown.length) body.append(h("tr", {}, h("td", { colspan: 8, class: "muted" }, "No run matches.")));
  };
  // A read that fails (a commit not in the repository) is said in the view's error area; what is drawn stays.
  const errorArea = h("div", { id: "view-error", class: "error", role: "alert" });
  const reload = async () => {
    try {
      shown = (await api<Page<Run>>(listPath())).items;
      errorArea.remove();
      draw();
    } catch (err) {
      errorArea.replaceChildren(h("p", {}, viewError(err)));
      if (!errorArea.isConnected) document.getElementById("main")?.prepend(errorArea);
    }
  };
  // Whether a run heard of on the stream belongs in this view (the stream has the status and repository filters too,
  // but also sends a run that left the status, so that it leaves the list).
  const belongs = (r: Run) =>
    (!status.value || r.status === status.value) &&
    (!repoSelect.value || r.repository_id === repoSelect.value) &&
    (!commit || !repoSelect.value || r.commit_hash.startsWith(commit));
  const onRun = (r: Run) => {
    const at = shown.findIndex((x) => x.run_id === r.run_id);
    if (at >= 0) {
      if (belongs(r)) shown[at] = newerRun(shown[at]!, r);
      else shown.splice(at, 1);
    } else if (belongs(r) && (shown.length < LIST_LIMIT || r.run_id > shown.at(-1)!.run_id)) {
      shown = [...shown, r].sort((a, b) => (a.run_id < b.run_id ? 1 : -1)).slice(0, LIST_LIMIT);
    } else return;
    draw();
  };
  const live = h("span", { id: "runs-live", class: "muted" });
  let stop = () => {};
  const follow = () => {
    stop();
    stop = followRuns<Run>(`/v1/runs/events${q({ status: status.value, repository_id: repoSelect.value })}`, {
      reload,
      run: onRun,
      deleted: (id) => {
        shown = shown.filter((x) => x.run_id !== id);
        draw();
      },
      state: (st) => {
        live.textContent = st === "live" ? "live" : st === "reconnecting" ? "reconnecting…" : "refreshed every 3 s";
        live.dataset.state = st;
      },
    });
  };
  const onFilter = () => {
    history.replaceState(null, "", `#/runs${q({ status: status.value, repository_id: repoSelect.value, commit: repoSelect.value ? commit : "" })}`);
    follow();
  };
  status.addEventListener("change", onFilter);
  repoSelect.addEventListener("change", onFilter);
  show(
    h("h1", {}, "Runs"),
    h(
      "form",
      { class: "inline" },
      h("label", { for: "filter-status" }, "Status", status),
      h("label", { for: "filter-repository" }, "Repository", repoSelect),
      commit
        ? h(
            "span",
            { class: "muted", id: "filter-commit" },
            `commit ${commit.slice(0, 10)} `,
            h("a", { href: `#/runs${q({ status: status.value, repository_id: reqRepo ?? "" })}` }, "(all commits)"),
          )
        : null,
      live,
    ),
    h(
      "table",
      {},
      h("thead", {}, h("tr", {}, ...["Run", "Status", "What", "Repository", "Commit", "Exit", "Duration", "Created"].map((t) => h("th", { scope: "col" }, t)))),
      body,
    ),
  );
  follow();
  // The durations of unfinished runs and the relative times move on between changes.
  const ticker = setInterval(draw, 10_000);
  onLeave(() => {
    stop();
    clearInterval(ticker);
  });
}

/** One row of the runs list. */
function runRow(r: Run, names: ReadonlyMap<string, string>, now: number): HTMLElement {
  const p = runPhases(r, now);
  return h(
    "tr",
    { "data-run-id": r.run_id, "data-status": r.status },
    h("td", {}, h("a", { href: `#/runs/${r.run_id}` }, r.run_id.slice(-12))),
    h(
      "td",
      {},
      statusIcon(r.status),
      statusBadge(r.status),
      p.current ? h("span", { class: "muted", "data-phase": p.current.id }, ` · ${p.current.label}`) : null,
    ),
    // One line, the whole command on hover.
    h("td", { class: "what", title: r.run_config.command.join(" ") }, r.experiment_id ?? h("code", {}, r.run_config.command.join(" "))),
    h("td", {}, h("a", { href: `#/repos/${r.repository_id}` }, names.get(r.repository_id) ?? r.repository_id.slice(-12))),
    h("td", {}, h("a", { href: `#/repos/${r.repository_id}${q({ ref: r.commit_hash })}` }, r.commit_hash.slice(0, 10))),
    h("td", {}, r.exit_code ?? ""),
    h("td", { class: "duration" }, p.ended ? formatSeconds(p.totalSeconds) : FINISHED.has(r.status) ? "—" : `${formatSeconds(p.totalSeconds)} so far`),
    h("td", { class: "created" }, timeAgo(r.created_at, now)),
  );
}

export async function runPage(id: string): Promise<void> {
  let run = await api<Run>(`/v1/runs/${seg(id)}`);
  const head = h("div", { id: "run-head" });
  let cancelAskedAt: string | null = null;
  const phases = h("div", {});
  let shownPhases = "";
  const attempts = h("div", {});
  let shownAttempts: string | null = null;
  // Metrics and outputs (results.ts): read as the run's status calls for, once on the page.
  const results = new RunResults(id);
  const renderHead = () => {
    if (results.element.isConnected) results.update(run);
    const now = Date.now();
    const p = runPhases(run, now);
    document.title = `Run ${id.slice(-12)} (${run.status}) · codeplane`;
    head.replaceChildren(
      h(
        "p",
        {},
        "Status ",
        statusBadge(run.status),
        attemptNote(run) ? [" · ", h("span", { id: "run-attempt" }, attemptNote(run))] : "",
        p.current ? [" · ", h("span", { id: "run-phase", "data-phase": p.current.id }, p.current.label)] : "",
        p.current?.since ? [" for ", elapsed(p.current.since, now)] : "",
        run.exit_code !== null ? ` · exit code ${run.exit_code}` : "",
        run.duration_seconds !== null ? ` · ${run.duration_seconds.toFixed(1)} s` : "",
        ` · ${run.compute_type} · started ${fmtTime(run.start_time)}`,
      ),
      h("p", {}, run.experiment_id ? `experiment ${run.experiment_id} ` : "", h("code", {}, run.run_config.command.join(" "))),
      run.error ? h("p", { class: "error" }, run.error) : "",
      cancelAskedAt ? h("p", { id: "cancel-note", role: "status" }, `Cancellation requested at ${cancelAskedAt}.`) : "",
      FINISHED.has(run.status)
        ? ""
        : h(
            "button",
            {
              type: "button",
              onclick: async () => {
                // The answer is the run as it was when the cancel was asked for: the stream may have said more since.
                // (Awaited first: `run` must be read when the answer comes, not when the cancel was asked for.)
                const answer = await api<Run>(`/v1/runs/${seg(id)}/cancel`, { method: "POST" });
                run = newerRun(run, answer);
                cancelAskedAt = new Date().toLocaleTimeString();
                renderHead();
              },
            },
            "Cancel run",
          ),
    );
    // The list is rebuilt only when it changes (not on every poll), so a screen reader reading it keeps its place.
    const key = JSON.stringify(p.phases.map((x) => [x.id, x.label, x.state, x.since, x.seconds, x.note]).concat([[p.ended, p.firstOutputSeconds, run.status]]));
    if (key !== shownPhases) {
      shownPhases = key;
      phases.replaceChildren(phaseSection(p, run.status, now));
    }
    if (attemptsKey(run) !== shownAttempts) {
      shownAttempts = attemptsKey(run);
      attempts.replaceChildren(attemptsSection(run) ?? "");
    }
  };
  renderHead();
  const env = run.environment;
  const setup = env?.key
    ? new SetupLog(id, env.cache === "hit" ? "Restored from the cache: open to read the output of the build it reuses." : "Open to read the install's output.")
    : null;
  // The newest run, whichever brought it (src/ui/app/runstate.ts): the stream's status events and
  // timeline snapshots, reads of the run and the cancel response may cross, and the run only moves forward.
  const refresh = async () => {
    const fresh = await api<Run>(`/v1/runs/${seg(id)}`);
    run = newerRun(run, fresh);
    renderHead();
  };
  const onTimeline = (timeline: TimelineEvent[]) => {
    if (timeline.length < (run.timeline?.length ?? 0)) return;
    // The command's start and the end are in it too: the header shows them.
    const at = (event: string) => timeline.find((e) => e.event === event)?.at ?? null;
    run = { ...run, timeline, start_time: at("started") ?? run.start_time, close_time: at("ended") ?? run.close_time };
    renderHead();
  };
  const anchor = /#L(\d+)$/.exec(location.hash);
  const view = new LogView(id, {
    line: anchor ? Number(anchor[1]) : null,
    // replaceState, not the hash: a hashchange would draw the page again.
    onAnchor: (seq) => history.replaceState(null, "", `#/runs/${seg(id)}#L${seq}`),
    exitCode: () => run.exit_code,
    onStatus: (status) => {
      run = withStatus(run, status);
      renderHead();
      void refresh().catch(() => {});
    },
    onSetup: (line) => setup?.add(line),
    onTimeline,
  });
  show(
    h("h1", {}, `Run ${id}`),
    h(
      "p",
      { id: "run-links" },
      h("a", { href: `#/repos/${run.repository_id}${q({ ref: run.commit_hash })}` }, "Its commit"),
      " · ",
      h("a", { href: `#/repos/${run.repository_id}/analysis/${run.commit_hash}` }, "Its commit's analysis"),
      " · ",
      h("a", { href: `#/runs${q({ repository_id: run.repository_id, commit: run.commit_hash })}` }, "This commit's runs"),
      run.experiment_id ? [" · ", h("a", { href: experimentHref(run.repository_id, run.experiment_id), id: "run-experiment" }, "Its experiment's runs")] : "",
      run.rerun_of ? [" · ", h("a", { href: `#/runs/${run.rerun_of}` }, "The run this re-runs")] : null,
      " · ",
      h("a", { href: "#/runs" }, "All runs"),
    ),
    rerunButton(id),
    head,
    attempts,
    phases,
    setup?.element,
    view.element,
    results.element,
  );
  view.start();
  results.update(run);
  // The phase in progress: its time ticks every second; the run is read again, now and then, while it goes on.
  const ticker = setInterval(() => tick(document.getElementById("main") ?? document), 1000);
  const poller = setInterval(() => {
    if (!FINISHED.has(run.status)) void refresh().catch(() => {});
  }, RUN_POLL_MS);
  onLeave(() => {
    view.stop();
    results.stop();
    clearInterval(ticker);
    clearInterval(poller);
  });
}

/** Re-run: the same commit and experiment (or command) again, POST /v1/runs/{id}/rerun; the new run's page opens. */
function rerunButton(id: string): HTMLElement {
  const error = h("span", { class: "error", role: "alert", id: "rerun-error" });
  const button = h("button", { type: "button", id: "rerun" }, "Re-run");
  button.addEventListener("click", async () => {
    button.disabled = true;
    error.textContent = "";
    try {
      const fresh = await api<Run>(`/v1/runs/${seg(id)}/rerun`, { method: "POST", json: {} });
      location.hash = `#/runs/${fresh.run_id}`;
    } catch (err) {
      // The page stays: the error is shown beside the button.
      error.textContent = viewError(err);
      button.disabled = false;
    }
  });
  return h("p", {}, button, " ", error);
}
