// The run page's results: its metrics, one plot of each series over steps,
// and its output files with previews (outputs.ts). Metrics are read again
// while the run goes on (they arrive as its output is archived); outputs come
// when its command ends (a cancelled run's a few seconds after), so they are
// read when the run is seen finished, and once more a little later.

import { api, ApiError, seg } from "./api.ts";
import { h } from "./dom.ts";
import { describeSeries, type Point } from "./compare.ts";
import { outputList, type RefusedOutput, type RunOutput } from "./outputs.ts";
import { colourOf, destroyPlotsIn, destroyPlotsOnLeave, drawPlot, plotFigure, type DrawnPlot } from "./plot.ts";

export interface RunMetrics {
  series: { name: string; points: (Point & { ts: string })[] }[];
  final: Record<string, number>;
  dropped: number;
}

const FINISHED = new Set(["completed", "failed", "cancelled"]);
/** How often a run still going has its metrics read again. */
const METRICS_POLL_MS = 5_000;
/** After a run is seen finished, its outputs and metrics are read once more this much later (a cancelled run's pod sends them as it stops). */
const LATE_READ_MS = 8_000;

export class RunResults {
  readonly element: HTMLElement;
  readonly #runId: string;
  readonly #metrics = h("div", { id: "metrics" }, h("p", { class: "muted" }, "Loading metrics…"));
  readonly #outputs = h("div", { id: "outputs" }, h("p", { class: "muted" }, "Loading outputs…"));
  #status: string | null = null;
  #shownMetrics = "";
  #shownOutputs = "";
  #timers: ReturnType<typeof setTimeout>[] = [];
  #poller: ReturnType<typeof setInterval> | null = null;
  #stopped = false;
  /** The plots shown, by series name, with the caption that describes each. */
  readonly #plots = new Map<string, { plot: DrawnPlot; caption: HTMLElement }>();
  readonly #count = h("p", { class: "muted", id: "metrics-count" });

  constructor(runId: string) {
    this.#runId = runId;
    this.element = h(
      "section",
      { id: "results", "aria-labelledby": "results-title" },
      h("h2", { id: "results-title" }, "Results"),
      h("h3", {}, "Metrics"),
      this.#metrics,
      h("h3", {}, "Output files"),
      this.#outputs,
    );
    destroyPlotsOnLeave();
  }

  /** The run as the page now knows it: reads what its status calls for. Call once the element is on the page. */
  update(run: { status: string }): void {
    if (this.#stopped || run.status === this.#status) return;
    const first = this.#status === null;
    this.#status = run.status;
    if (FINISHED.has(run.status)) {
      if (this.#poller) clearInterval(this.#poller);
      this.#poller = null;
      void this.#read();
      // Seen finishing here (not opened finished): what the pod sends as it stops comes a little later.
      if (!first) this.#timers.push(setTimeout(() => void this.#read(), LATE_READ_MS));
      return;
    }
    if (first) void this.#read();
    this.#poller ??= setInterval(() => void this.#readMetrics(), METRICS_POLL_MS);
  }

  stop(): void {
    this.#stopped = true;
    if (this.#poller) clearInterval(this.#poller);
    for (const t of this.#timers) clearTimeout(t);
  }

  async #read(): Promise<void> {
    await Promise.all([this.#readMetrics(), this.#readOutputs()]);
  }

  async #readMetrics(): Promise<void> {
    try {
      const m = await api<RunMetrics>(`/v1/runs/${seg(this.#runId)}/metrics`);
      const key = JSON.stringify(m.series.map((s) => [s.name, s.points.length, s.points.at(-1)?.step, s.points.at(-1)?.value]).concat([m.dropped]));
      if (this.#stopped || key === this.#shownMetrics) return;
      this.#shownMetrics = key;
      this.#drawMetrics(m);
    } catch (err) {
      this.#failed(this.#metrics, "metrics", err);
    }
  }

  #drawMetrics(m: RunMetrics): void {
    // The same series as shown (a run going on adds points): each plot takes its new points as it is.
    const names = m.series.map((s) => s.name);
    if (this.#plots.size && names.length === this.#plots.size && names.every((n) => this.#plots.has(n))) {
      for (const s of m.series) {
        const shown = this.#plots.get(s.name)!;
        shown.plot.setData([s.points.map((p) => p.step), s.points.map((p) => p.value)]);
        shown.caption.textContent = ` · ${describeSeries(s.points)}`;
      }
      this.#count.textContent = this.#countText(m);
      return;
    }
    destroyPlotsIn(this.#metrics);
    this.#plots.clear();
    if (!m.series.length) {
      this.#metrics.replaceChildren(
        h(
          "p",
          { class: "muted" },
          FINISHED.has(this.#status ?? "") ? "This run reported no metrics." : "No metrics yet.",
          " A run reports one by printing ",
          h("code", {}, "::metric name=loss::0.25"),
          " or appending to ",
          h("code", {}, "$CODEPLANE_METRICS_FILE"),
          ".",
        ),
      );
      return;
    }
    const figures = m.series.map((s, i) => {
      const caption = h("span", {}, ` · ${describeSeries(s.points)}`);
      const f = plotFigure([h("strong", {}, s.name), caption], { "data-metric": s.name });
      return { f, s, i, caption };
    });
    this.#count.textContent = this.#countText(m);
    this.#metrics.replaceChildren(this.#count, h("div", { class: "plot-grid" }, ...figures.map((x) => x.f.figure)));
    // Drawn once on the page, where the holders have their width.
    for (const { f, s, i, caption } of figures) {
      const plot = drawPlot(f.holder, {
        yLabel: s.name,
        lines: [{ label: s.name, colour: colourOf(i) }],
        data: [s.points.map((p) => p.step), s.points.map((p) => p.value)],
      });
      this.#plots.set(s.name, { plot, caption });
    }
  }

  #countText(m: RunMetrics): string {
    return `${m.series.length} series${m.dropped ? ` · ${m.dropped} points refused by the operator's bounds` : ""}`;
  }

  async #readOutputs(): Promise<void> {
    try {
      const o = await api<{ items: RunOutput[]; refused: RefusedOutput[] }>(`/v1/runs/${seg(this.#runId)}/outputs`);
      const key = JSON.stringify([o.items.map((x) => x.sha256 + x.path), o.refused.map((x) => x.path)]);
      if (this.#stopped || key === this.#shownOutputs) return;
      this.#shownOutputs = key;
      this.#outputs.replaceChildren(
        !o.items.length && !o.refused.length && !FINISHED.has(this.#status ?? "")
          ? h("p", { class: "muted" }, "Output files are sent when the command ends (those it writes to ", h("code", {}, "$CODEPLANE_OUTPUT_DIR"), ").")
          : outputList(this.#runId, o.items, o.refused),
      );
    } catch (err) {
      this.#failed(this.#outputs, "outputs", err);
    }
  }

  #failed(where: HTMLElement, what: string, err: unknown): void {
    if (this.#stopped || (err instanceof ApiError && err.status === 401)) return;
    where.replaceChildren(h("p", { class: "error", role: "alert" }, `Could not read the ${what}: ${err instanceof Error ? err.message : String(err)}`));
  }
}
