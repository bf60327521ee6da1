// Line plots of metrics over steps, drawn by uPlot (a kept library, served
// from its package at /ui/app/uplot.js; src/ui/router.ts). A plot is a
// <figure> whose caption says in words what the canvas shows; it follows its
// container's width and is destroyed with the view.

import uPlot from "./uplot.js";
import { h, onLeave } from "./dom.ts";

/** Line colours, distinct and readable on white (the first is the dashboard's accent). */
export const PALETTE = ["#0550ae", "#bc4c00", "#116329", "#8250df", "#a40e26", "#1b7c83", "#953800", "#6e7781", "#bf3989", "#4d2d00"];
export const colourOf = (i: number): string => PALETTE[i % PALETTE.length]!;

export interface PlotLine {
  label: string;
  colour: string;
}

export interface PlotOptions {
  /** What the y axis measures (a metric's name). */
  yLabel: string;
  lines: PlotLine[];
  /** uPlot's aligned data: the steps, then each line's value at every step (null: none there). */
  data: [number[], ...(number | null)[][]];
  height?: number;
}

/** Steps are whole numbers: the x axis's ticks are 1, 2, 5, 10, 20, 50, ... apart, never fractions. */
const STEP_INCREMENTS = Array.from({ length: 10 }, (_, e) => [1, 2, 5].map((m) => m * 10 ** e)).flat();

const alive = new Set<uPlot>();
let resizer: ResizeObserver | null = null;

/** Destroys the plots inside `container` (before it is emptied or redrawn). */
export function destroyPlotsIn(container: HTMLElement): void {
  for (const p of [...alive]) if (container.contains(p.root)) destroy(p);
}

/** A drawn plot: new points for the same lines are given to it (the zoom and the pointer stay), not drawn anew. */
export interface DrawnPlot {
  setData(data: PlotOptions["data"]): void;
}

/** A plot drawn into `holder` (already on the page, so it has a width); replaces what was there. */
export function drawPlot(holder: HTMLElement, o: PlotOptions): DrawnPlot {
  destroyPlotsIn(holder);
  holder.replaceChildren();
  const width = Math.max(240, holder.clientWidth || 480);
  const many = o.data[0].length > 60;
  const plot = new uPlot(
    {
      width,
      height: o.height ?? 220,
      scales: { x: { time: false } },
      axes: [
        { label: "step", stroke: "#57606a", grid: { stroke: "#eaeef2" }, ticks: { stroke: "#d0d7de" }, incrs: STEP_INCREMENTS },
        { label: o.yLabel, stroke: "#57606a", grid: { stroke: "#eaeef2" }, ticks: { stroke: "#d0d7de" }, size: 60 },
      ],
      series: [
        { label: "step" },
        ...o.lines.map((l) => ({ label: l.label, stroke: l.colour, width: 2, spanGaps: true, points: { show: !many, size: 5, fill: l.colour } })),
      ],
      legend: { show: true, live: true },
      cursor: { drag: { x: true, y: false } },
    },
    o.data,
    holder,
  );
  alive.add(plot);
  resizer ??= new ResizeObserver((entries) => {
    for (const e of entries) {
      for (const p of alive) {
        if (p.root.parentElement !== e.target) continue;
        const w = Math.max(240, Math.floor(e.contentRect.width));
        if (Math.abs(w - p.width) > 4) p.setSize({ width: w, height: p.height });
      }
    }
  });
  resizer.observe(holder);
  return { setData: (data) => plot.setData(data) };
}

function destroy(p: uPlot): void {
  if (p.root.parentElement) resizer?.unobserve(p.root.parentElement);
  alive.delete(p);
  p.destroy();
}

/** Every plot is destroyed when the view is left. */
export function destroyPlotsOnLeave(): void {
  onLeave(() => {
    for (const p of [...alive]) destroy(p);
  });
}

/** A figure with a caption; its `holder` takes the plot once the figure is on the page. */
export function plotFigure(caption: (Node | string)[], attrs: Record<string, string> = {}): { figure: HTMLElement; holder: HTMLElement } {
  const holder = h("div", { class: "plot" });
  const figure = h("figure", { class: "plot-figure", ...attrs }, holder, h("figcaption", {}, ...caption));
  return { figure, holder };
}
