// A run's output files on its page: each with its size, type and a download
// link, and a preview read on demand and bounded in bytes: images shown by
// the browser from the API's own URL (<img>: an SVG's scripts never run
// there), CSV and TSV as a table, JSON indented, text as text. Every byte of
// a file becomes text nodes (never HTML), so a file cannot put markup or
// script on the page; a file over the bounds is offered for download only.

import { ApiError, filePath, seg } from "./api.ts";
import { h } from "./dom.ts";
import { parseDelimited } from "./csv.ts";

export interface RunOutput {
  path: string;
  size: number;
  sha256: string;
  content_type: string;
}
export interface RefusedOutput {
  path: string;
  size: number | null;
  reason: string;
}

/** Images larger than this are not previewed (the browser would read them whole). */
export const IMAGE_PREVIEW_BYTES = 10 * 1024 * 1024;
/** How much of a text, CSV or JSON file a preview reads (a range request); the rest is for download. */
export const TEXT_PREVIEW_BYTES = 256 * 1024;
/** Rows of a CSV preview. */
export const TABLE_PREVIEW_ROWS = 200;
/** How many previews open by themselves when the page is drawn (small ones only). */
const AUTO_OPEN = 3;
const AUTO_OPEN_BYTES = 1024 * 1024;

const IMAGE_TYPES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp", "image/svg+xml", "image/bmp"]);
const TEXT_TYPES = new Set(["application/yaml", "application/xml", "application/x-ndjson"]);

export type PreviewKind = "image" | "csv" | "tsv" | "json" | "text" | null;

/** How an output is previewed, from its content type; null: download only. */
export function previewKind(contentType: string): PreviewKind {
  const type = contentType.split(";")[0]!.trim().toLowerCase();
  if (IMAGE_TYPES.has(type)) return "image";
  if (type === "text/csv") return "csv";
  if (type === "text/tab-separated-values") return "tsv";
  if (type === "application/json" || type.endsWith("+json")) return "json";
  if (type.startsWith("text/") || TEXT_TYPES.has(type)) return "text";
  return null;
}

export function fmtBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ["KiB", "MiB", "GiB", "TiB"];
  let v = n / 1024;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${v.toFixed(1)} ${units[u]}`;
}

export const outputUrl = (runId: string, path: string): string => `/v1/runs/${seg(runId)}/outputs/${filePath(path)}`;

/** The first `max` bytes of an output as text (a range request; a server answering whole is read only that far). */
async function readStart(url: string, size: number, max: number): Promise<{ text: string; cut: boolean }> {
  const whole = size <= max;
  const res = await fetch(url, { credentials: "same-origin", headers: whole || size === 0 ? {} : { range: `bytes=0-${max - 1}` } });
  if (!res.ok) {
    let detail = res.statusText || `HTTP ${res.status}`;
    try {
      detail = ((await res.json()) as { detail?: string }).detail ?? detail;
    } catch {
      // not JSON
    }
    throw new ApiError(res.status, detail);
  }
  const reader = res.body!.getReader();
  const decoder = new TextDecoder("utf-8");
  let text = "";
  let read = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    const take = value.subarray(0, Math.max(0, max - read));
    read += take.length;
    // stream: true keeps a character cut at the end out of the text.
    text += decoder.decode(take, { stream: true });
    if (read >= max) {
      await reader.cancel();
      break;
    }
  }
  return { text, cut: !whole };
}

function tableOf(rows: string[][]): HTMLElement {
  const [head = [], ...body] = rows;
  const width = Math.max(0, ...rows.map((r) => r.length));
  const pad = (r: string[]) => [...r, ...new Array<string>(width - r.length).fill("")];
  return h(
    "div",
    { class: "table-scroll", tabindex: 0, role: "region", "aria-label": "Table preview" },
    h(
      "table",
      { class: "preview-table" },
      h("thead", {}, h("tr", {}, ...pad(head).map((c) => h("th", { scope: "col" }, c)))),
      h("tbody", {}, ...body.map((r) => h("tr", {}, ...pad(r).map((c) => h("td", {}, c))))),
    ),
  );
}

/** The preview of one output, read now (the caller shows it when its section opens). */
export async function previewOf(runId: string, o: RunOutput): Promise<HTMLElement> {
  const kind = previewKind(o.content_type);
  const url = outputUrl(runId, o.path);
  if (kind === null) return h("p", { class: "muted" }, `No preview for ${o.content_type}: download it.`);
  if (kind === "image") {
    if (o.size > IMAGE_PREVIEW_BYTES) return h("p", { class: "muted" }, `Too large to preview (${fmtBytes(o.size)}): download it.`);
    return h("img", { class: "preview-image", src: url, alt: `Output ${o.path}`, loading: "lazy" });
  }
  const { text, cut } = await readStart(url, o.size, TEXT_PREVIEW_BYTES);
  const note = (shown: string) => h("p", { class: "muted preview-note" }, `${shown} of ${fmtBytes(o.size)}; download it for the rest.`);
  if (kind === "csv" || kind === "tsv") {
    const t = parseDelimited(text, kind === "csv" ? "," : "\t", TABLE_PREVIEW_ROWS + 1, cut);
    const rows = t.rows.length ? `${t.rows.length - 1} rows` : "no rows";
    return h("div", {}, tableOf(t.rows), t.truncated ? note(`The first ${rows} (and a header)`) : null);
  }
  if (kind === "json" && !cut) {
    try {
      return h("pre", { class: "preview-text", tabindex: 0 }, JSON.stringify(JSON.parse(text), null, 2));
    } catch {
      // Not valid JSON: shown as it is, below.
    }
  }
  return h("div", {}, h("pre", { class: "preview-text", tabindex: 0 }, text), cut ? note(`The first ${fmtBytes(TEXT_PREVIEW_BYTES)}`) : null);
}

/** The outputs as a list of collapsible entries, previews read when one is opened (the first few small ones open by themselves). */
export function outputList(runId: string, items: readonly RunOutput[], refused: readonly RefusedOutput[]): HTMLElement {
  let opened = 0;
  const entries = items.map((o) => {
    const kind = previewKind(o.content_type);
    const body = h("div", { class: "output-preview" });
    const entry = h(
      "details",
      { class: "output", "data-path": o.path, "data-preview": kind ?? "none" },
      h("summary", {}, h("span", { class: "output-path" }, o.path), h("span", { class: "muted" }, ` · ${fmtBytes(o.size)} · ${o.content_type.split(";")[0]}`)),
      h(
        "p",
        { class: "output-actions" },
        h("a", { href: outputUrl(runId, o.path), download: o.path.slice(o.path.lastIndexOf("/") + 1) }, "Download"),
        h("span", { class: "muted" }, ` sha256 ${o.sha256.slice(0, 16)}…`),
      ),
      body,
    );
    let loaded = false;
    entry.addEventListener("toggle", () => {
      if (!entry.open || loaded) return;
      loaded = true;
      body.dataset.state = "loading";
      body.replaceChildren(h("p", { class: "muted" }, "Loading preview…"));
      previewOf(runId, o).then(
        (el) => {
          body.dataset.state = "shown";
          body.replaceChildren(el);
        },
        (err: unknown) => {
          loaded = false;
          body.dataset.state = "failed";
          body.replaceChildren(h("p", { class: "error", role: "alert" }, `Preview failed: ${err instanceof Error ? err.message : String(err)}`));
        },
      );
    });
    if (kind !== null && opened < AUTO_OPEN && o.size <= AUTO_OPEN_BYTES) {
      opened++;
      entry.open = true;
    }
    return entry;
  });
  return h(
    "div",
    { id: "outputs-list" },
    items.length
      ? h(
          "p",
          {},
          `${items.length} ${items.length === 1 ? "file" : "files"}, ${fmtBytes(items.reduce((n, o) => n + o.size, 0))} · `,
          h("a", { href: `/v1/runs/${seg(runId)}/outputs.tar.gz`, download: `run-${runId}-outputs.tar.gz`, id: "outputs-archive" }, "Download all (.tar.gz)"),
        )
      : h("p", { class: "muted" }, "No output files."),
    ...entries,
    refused.length
      ? h(
          "div",
          { class: "notice", id: "outputs-refused" },
          h("p", {}, "Not stored (over a limit):"),
          h("ul", {}, ...refused.map((r) => h("li", {}, h("code", {}, r.path), r.size !== null ? ` (${fmtBytes(r.size)})` : "", `: ${r.reason}`))),
        )
      : null,
  );
}
