// An experiment's page (#/repos/<id>/experiments/<experiment id>): its runs
// compared, from GET /v1/runs?repository_id=&experiment_id= (their parameters
// and final metrics): a table sortable by any column, and one plot of a
// chosen metric over steps with a line per selected run.

import { api, q, seg, type Page } from "./api.ts";
import { h, onLeave, show, statusBadge, timeAgo } from "./dom.ts";
import { alignSeries, columnsOf, shownValue, sortRuns, type ComparedRun, type SortKey } from "./compare.ts";
import { colourOf, destroyPlotsOnLeave, drawPlot, plotFigure } from "./plot.ts";
import type { RunMetrics } from "./results.ts";

/** The newest runs the page compares (pages of 100 of the run list). */
const MAX_RUNS = 500;
/** Runs plotted when the page opens: the newest that reported a metric. */
const FIRST_SELECTED = 5;

export const experimentHref = (repositoryId: string, experimentId: string): string =>
  `#/repos/${seg(repositoryId)}/experiments/${encodeURIComponent(experimentId)}`;

interface ExperimentRun extends ComparedRun {
  commit_hash: string;
  experiment_id: string | null;
}

async function runsOf(repositoryId: string, experimentId: string): Promise<{ runs: ExperimentRun[]; more: boolean }> {
  const runs: ExperimentRun[] = [];
  let cursor: string | null = null;
  do {
    const page: Page<ExperimentRun> = await api<Page<ExperimentRun>>(
      `/v1/runs${q({ repository_id: repositoryId, experiment_id: experimentId, limit: 100, cursor })}`,
    );
    runs.push(...page.items);
    cursor = page.next_cursor;
  } while (cursor && runs.length < MAX_RUNS);
  return { runs, more: cursor !== null };
}

/** A run's name in a legend: the end of its id and its parameters. */
function runLabel(r: ComparedRun): string {
  const params = Object.entries(r.parameters)
    .map(([k, v]) => `${k}=${shownValue(v)}`)
    .join(" ");
  const label = `${r.run_id.slice(-8)}${params ? ` ${params}` : ""}`;
  return label.length > 60 ? `${label.slice(0, 59)}…` : label;
}

export async function experimentPage(repositoryId: string, experimentId: string): Promise<void> {
  const [{ runs, more }, repo] = await Promise.all([
    runsOf(repositoryId, experimentId),
    api<{ id: string; name: string }>(`/v1/repositories/${seg(repositoryId)}`).catch(() => null),
  ]);
  destroyPlotsOnLeave();
  const { parameters, metrics } = columnsOf(runs);
  const colour = new Map(runs.map((r, i) => [r.run_id, colourOf(i)]));
  const selected = new Set(
    runs
      .filter((r) => Object.keys(r.final_metrics).length)
      .slice(0, FIRST_SELECTED)
      .map((r) => r.run_id),
  );
  const metricsOf = new Map<string, Promise<RunMetrics>>();
  const readMetrics = (id: string) => {
    let p = metricsOf.get(id);
    if (!p) {
      p = api<RunMetrics>(`/v1/runs/${seg(id)}/metrics`);
      p.catch(() => metricsOf.delete(id));
      metricsOf.set(id, p);
    }
    return p;
  };

  // The plot: one metric, a line per selected run.
  const metricSelect = h("select", { id: "plot-metric" }, ...metrics.map((m) => h("option", { value: m }, m)));
  const plotState = h("p", { id: "plot-state", class: "muted", role: "status" });
  const { figure, holder } = plotFigure([plotState], { id: "compare-plot" });
  let drawn = 0;
  const drawCompare = async () => {
    const metric = metricSelect.value;
    const chosen = runs.filter((r) => selected.has(r.run_id));
    const turn = ++drawn;
    if (!metric || !chosen.length) {
      holder.replaceChildren();
      plotState.textContent = metric ? "Select runs in the table to plot them." : "No run of this experiment reported a metric.";
      return;
    }
    plotState.textContent = `Loading ${metric} of ${chosen.length} runs…`;
    const all = await Promise.all(chosen.map((r) => readMetrics(r.run_id)));
    if (turn !== drawn) return; // a later choice is being drawn
    const series = all.map((m) => m.series.find((s) => s.name === metric)?.points ?? []);
    const without = chosen.filter((_, i) => !series[i]!.length).length;
    drawPlot(holder, {
      yLabel: metric,
      lines: chosen.map((r) => ({ label: runLabel(r), colour: colour.get(r.run_id)! })),
      data: alignSeries(series),
      height: 300,
    });
    holder.dataset.runs = String(chosen.length);
    plotState.textContent = `${metric} over steps: ${chosen.length} ${chosen.length === 1 ? "run" : "runs"}${without ? ` (${without} without this metric)` : ""}.`;
  };
  const redraw = () =>
    void drawCompare().catch((err: unknown) => {
      plotState.textContent = `Could not read the metrics: ${err instanceof Error ? err.message : String(err)}`;
    });
  metricSelect.addEventListener("change", redraw);

  // The table, sortable by any column (a button in each header; aria-sort says how it is sorted).
  type Column = { title: string; key: SortKey; cell: (r: ExperimentRun) => Node | string; kind: string };
  const columns: Column[] = [
    { title: "Status", key: { kind: "status" }, cell: (r) => statusBadge(r.status), kind: "status" },
    { title: "Created", key: { kind: "created" }, cell: (r) => timeAgo(r.created_at), kind: "created" },
    ...parameters.map((p): Column => ({ title: p, key: { kind: "parameter", name: p }, cell: (r) => shownValue(r.parameters[p]), kind: "parameter" })),
    ...metrics.map((m): Column => ({
      title: m,
      key: { kind: "metric", name: m },
      cell: (r) => (r.final_metrics[m] === undefined ? "" : String(r.final_metrics[m])),
      kind: "metric",
    })),
  ];
  let sortBy = 1;
  let direction: "ascending" | "descending" = "descending";
  const headRow = h("tr", {});
  const body = h("tbody", {});
  const drawTable = () => {
    const order = sortRuns(runs, columns[sortBy]!.key, direction);
    headRow.replaceChildren(
      h("th", { scope: "col" }, "Plot"),
      h("th", { scope: "col" }, "Run"),
      ...columns.map((c, i) =>
        h(
          "th",
          { scope: "col", class: `col-${c.kind}`, "aria-sort": i === sortBy ? direction : null },
          h(
            "button",
            {
              type: "button",
              class: "sort",
              "data-sort": c.title,
              onclick: () => {
                direction = i === sortBy && direction === "descending" ? "ascending" : "descending";
                sortBy = i;
                drawTable();
              },
            },
            c.kind === "metric" ? `${c.title} (final)` : c.title,
            h("span", { class: "sort-mark", "aria-hidden": "true" }, i === sortBy ? (direction === "ascending" ? " ▲" : " ▼") : ""),
          ),
        ),
      ),
    );
    body.replaceChildren(
      ...order.map((r) => {
        const box = h("input", { type: "checkbox", checked: selected.has(r.run_id), "aria-label": `Plot run ${r.run_id.slice(-12)}` });
        const swatch = h("span", { class: "swatch", "aria-hidden": "true" });
        // A colour set through the CSSOM (no style attribute: the CSP allows neither).
        swatch.style.background = selected.has(r.run_id) ? colour.get(r.run_id)! : "transparent";
        box.addEventListener("change", () => {
          if (box.checked) selected.add(r.run_id);
          else selected.delete(r.run_id);
          swatch.style.background = box.checked ? colour.get(r.run_id)! : "transparent";
          redraw();
        });
        return h(
          "tr",
          { "data-run-id": r.run_id },
          h("td", {}, box, swatch),
          h("td", {}, h("a", { href: `#/runs/${r.run_id}` }, r.run_id.slice(-12))),
          ...columns.map((c) => h("td", { class: `col-${c.kind}` }, c.cell(r))),
        );
      }),
    );
  };
  drawTable();

  const title = `Experiment ${experimentId}`;
  show(
    h("h1", {}, title),
    h(
      "p",
      {},
      h("a", { href: `#/repos/${seg(repositoryId)}` }, repo ? `Repository ${repo.name}` : "Its repository"),
      " · ",
      h("a", { href: `#/runs${q({ repository_id: repositoryId })}` }, "All runs of the repository"),
    ),
    runs.length
      ? [
          h(
            "p",
            { id: "experiment-count" },
            `${runs.length} ${runs.length === 1 ? "run" : "runs"}${more ? ` (the newest ${runs.length})` : ""}, with ${parameters.length} parameters and ${metrics.length} metrics.`,
          ),
          h("h2", {}, "A metric over steps"),
          metrics.length ? h("p", {}, h("label", { for: "plot-metric", class: "check" }, "Metric ", metricSelect)) : null,
          figure,
          h("h2", { id: "compare-title" }, "Parameters and final metrics"),
          h(
            "div",
            { class: "table-scroll", tabindex: 0, role: "region", "aria-labelledby": "compare-title" },
            h("table", { id: "compare" }, h("thead", {}, headRow), body),
          ),
        ]
      : h("p", { class: "muted" }, "No run of this experiment yet: start one from its analysis."),
  );
  redraw();
  onLeave(() => {
    drawn++;
  });
}
