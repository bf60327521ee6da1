// The run's live log: an EventSource on /v1/runs/{id}/logs/stream (the
// session cookie authenticates it), ANSI colours, a stream filter, follow and
// pause, timestamps, line numbers (the run's seq), search, download. The
// stream's setup lines (the environment's install) are handed to onSetup.
//
// Bounded: the tab keeps the newest MAX_LINES lines (LogBuffer) and renders at
// most MAX_DOM of them, batched once per animation frame, so a producer of
// thousands of lines a second for minutes holds memory flat; the whole stored
// output is a download away. Resuming: the browser's own reconnection sends
// Last-Event-ID; when the stream is closed for good by an error, a new one
// starts with ?after=<last seq>; lines already seen are dropped by seq anyway.
// The run's timeline snapshots (`event: timeline`, on connect and as it grows)
// are handed to onTimeline.

import { parseAnsi } from "./ansi.ts";
import { h } from "./dom.ts";
import { LogBuffer, type LogLine, type Stream } from "./logbuffer.ts";
import type { TimelineEvent } from "./phases.ts";
import type { SetupLine } from "./setuplog.ts";

export const MAX_LINES = 10_000;
export const MAX_DOM = 2_000;
const MAX_LINE_CHARS = 4_000;

export interface LogViewOptions {
  onStatus?: (status: string) => void;
  /** The environment's install output (`event: setup`), which stays out of this view's stdout and stderr. */
  onSetup?: (line: SetupLine) => void;
  /** The run's whole timeline, as GET /v1/runs/{id} has it (`event: timeline`): on connect and each time it grows. */
  onTimeline?: (timeline: TimelineEvent[]) => void;
}

export class LogView {
  readonly element: HTMLElement;
  readonly #runId: string;
  readonly #o: LogViewOptions;
  readonly #buf = new LogBuffer(MAX_LINES);
  readonly #log: HTMLElement;
  readonly #info: HTMLElement;
  readonly #state: HTMLElement;
  #es: EventSource | null = null;
  #pending: LogLine[] = [];
  #frame = 0;
  #retry: ReturnType<typeof setTimeout> | null = null;
  #filter: "both" | Stream = "both";
  #search = "";
  #follow = true;
  #paused = false;
  #ended = false;
  #received = 0;
  #connections = 0;
  #opens = 0;

  constructor(runId: string, o: LogViewOptions = {}) {
    this.#runId = runId;
    this.#o = o;
    this.#log = h("div", { class: "log", id: "log", role: "log", "aria-label": "Run output", tabindex: 0 });
    this.#info = h("p", { class: "muted", id: "log-info" });
    this.#state = h("span", { id: "log-state", "aria-live": "polite" }, "connecting");
    const filter = h(
      "select",
      { id: "log-filter" },
      h("option", { value: "both" }, "stdout and stderr"),
      h("option", { value: "stdout" }, "stdout"),
      h("option", { value: "stderr" }, "stderr"),
    );
    filter.addEventListener("change", () => {
      this.#filter = filter.value as "both" | Stream;
      this.#rerender();
    });
    const search = h("input", { id: "log-search", type: "search", placeholder: "search" });
    search.addEventListener("input", () => {
      this.#search = search.value;
      this.#rerender();
    });
    const follow = h("input", { id: "log-follow", type: "checkbox", checked: true });
    follow.addEventListener("change", () => {
      this.#follow = follow.checked;
      if (this.#follow) this.#log.scrollTop = this.#log.scrollHeight;
    });
    // Scrolling up to read stops following; scrolling back to the bottom follows again.
    this.#log.addEventListener("scroll", () => {
      const atBottom = this.#log.scrollHeight - this.#log.scrollTop - this.#log.clientHeight < 24;
      if (atBottom !== this.#follow) {
        this.#follow = atBottom;
        follow.checked = atBottom;
      }
    });
    const pause = h("button", { id: "log-pause", type: "button", "aria-pressed": "false" }, "Pause");
    pause.addEventListener("click", () => {
      this.#paused = !this.#paused;
      pause.textContent = this.#paused ? "Resume" : "Pause";
      pause.setAttribute("aria-pressed", String(this.#paused));
      if (!this.#paused) this.#rerender();
    });
    const ts = h("input", { id: "log-ts", type: "checkbox", checked: true });
    ts.addEventListener("change", () => this.#log.classList.toggle("no-ts", !ts.checked));
    const ln = h("input", { id: "log-ln", type: "checkbox", checked: true });
    ln.addEventListener("change", () => this.#log.classList.toggle("no-ln", !ln.checked));
    const downloads = h(
      "span",
      {},
      "Download: ",
      ...(["stdout", "stderr"] as const).map((s) => h("button", { type: "button", id: `download-${s}`, onclick: () => void this.#download(s) }, s)),
    );
    this.element = h(
      "section",
      { "aria-label": "Output" },
      h(
        "div",
        { class: "toolbar" },
        h("label", { for: "log-filter" }, "Streams", filter),
        h("label", { for: "log-search" }, "Search", search),
        h("label", { class: "check" }, follow, "Follow"),
        pause,
        h("label", { class: "check" }, ts, "Timestamps"),
        h("label", { class: "check" }, ln, "Line numbers"),
        downloads,
        this.#state,
      ),
      this.#info,
      this.#log,
    );
  }

  start(): void {
    this.#connect();
  }

  stop(): void {
    this.#es?.close();
    this.#es = null;
    if (this.#retry) clearTimeout(this.#retry);
    cancelAnimationFrame(this.#frame);
    this.#ended = true;
  }

  #connect(): void {
    const after = this.#buf.lastSeq;
    const es = new EventSource(`/v1/runs/${encodeURIComponent(this.#runId)}/logs/stream${after ? `?after=${after}` : ""}`, { withCredentials: true });
    this.#es = es;
    this.#connections++;
    const onLine = (stream: Stream) => (e: MessageEvent<string>) => {
      const d = JSON.parse(e.data) as { seq: number; ts: string; line: string };
      this.#add({ seq: d.seq, ts: d.ts, stream, line: d.line });
    };
    es.addEventListener("open", () => {
      this.#opens++; // the browser's own reconnections included
      this.#setState("live");
      this.#updateInfo();
    });
    es.addEventListener("stdout", onLine("stdout"));
    es.addEventListener("stderr", onLine("stderr"));
    // The install's lines (ids like 0:preprocessing/42, which the browser sends back itself as Last-Event-ID).
    es.addEventListener("setup", (e) => this.#o.onSetup?.(JSON.parse((e as MessageEvent<string>).data) as SetupLine));
    // A full snapshot (no id): it replaces what the page had.
    es.addEventListener("timeline", (e) => this.#o.onTimeline?.((JSON.parse((e as MessageEvent<string>).data) as { timeline: TimelineEvent[] }).timeline));
    es.addEventListener("status", (e) => {
      const status = (JSON.parse((e as MessageEvent<string>).data) as { status?: string }).status ?? (e as MessageEvent<string>).data;
      this.#o.onStatus?.(status);
    });
    es.addEventListener("end", (e) => {
      const d = JSON.parse((e as MessageEvent<string>).data) as { status: string; exit_code: number | null };
      this.#ended = true;
      es.close();
      this.#flush();
      this.#setState(`ended: ${d.status}${d.exit_code !== null ? `, exit code ${d.exit_code}` : ""}`);
      this.#o.onStatus?.(d.status);
    });
    es.addEventListener("error", () => {
      if (this.#ended) return;
      if (es.readyState === EventSource.CLOSED) {
        // Refused or broken for good (an HTTP error): start again after the last line seen.
        this.#setState("reconnecting");
        this.#retry = setTimeout(() => this.#connect(), 2000);
      } else this.#setState("reconnecting"); // the browser retries itself, with Last-Event-ID
    });
  }

  #setState(s: string): void {
    this.#state.textContent = s;
    this.element.dataset.state = s;
  }

  #add(l: LogLine): void {
    if (!this.#buf.add(l)) return;
    this.#received++;
    this.#pending.push(l);
    if (this.#pending.length > MAX_DOM) this.#pending.splice(0, this.#pending.length - MAX_DOM);
    if (!this.#frame) this.#frame = requestAnimationFrame(() => this.#flush());
  }

  #keep = (l: LogLine): boolean => (this.#filter === "both" || l.stream === this.#filter) && (!this.#search || l.line.includes(this.#search));

  #flush(): void {
    this.#frame = 0;
    const batch = this.#pending;
    this.#pending = [];
    if (!this.#paused) {
      const frag = document.createDocumentFragment();
      for (const l of batch) if (this.#keep(l)) frag.append(this.#lineEl(l));
      this.#log.append(frag);
      this.#trim();
    }
    this.#updateInfo();
  }

  #rerender(): void {
    this.#pending = [];
    const frag = document.createDocumentFragment();
    for (const l of this.#buf.last(MAX_DOM, this.#keep)) frag.append(this.#lineEl(l));
    this.#log.replaceChildren(frag);
    if (this.#follow) this.#log.scrollTop = this.#log.scrollHeight;
    this.#updateInfo();
  }

  #trim(): void {
    let extra = this.#log.childElementCount - MAX_DOM;
    while (extra-- > 0) this.#log.firstElementChild!.remove();
    if (this.#follow) this.#log.scrollTop = this.#log.scrollHeight;
  }

  #updateInfo(): void {
    const d = this.element.dataset;
    d.lastSeq = String(this.#buf.lastSeq);
    d.received = String(this.#received);
    d.duplicates = String(this.#buf.duplicates);
    d.connections = String(this.#connections);
    d.opens = String(this.#opens);
    this.#info.textContent = this.#buf.dropped
      ? `${this.#received} lines received; the newest ${this.#buf.size} are kept here and at most ${MAX_DOM} shown. Download for the whole stored output.`
      : `${this.#received} lines${this.#paused ? " (paused)" : ""}`;
  }

  #lineEl(l: LogLine): HTMLElement {
    const el = h(
      "div",
      { class: `l ${l.stream}`, "data-seq": l.seq, "data-stream": l.stream },
      h("span", { class: "n" }, l.seq),
      h("span", { class: "t" }, l.ts.slice(11, 23)),
      l.stream === "stderr" ? h("span", { class: "s", title: "stderr" }, "err") : null,
    );
    const text = l.line.length > MAX_LINE_CHARS ? `${l.line.slice(0, MAX_LINE_CHARS)}… (${l.line.length} characters)` : l.line;
    for (const seg of parseAnsi(text)) {
      const node = seg.classes.length ? h("span", { class: seg.classes.join(" ") }) : el;
      if (this.#search && seg.text.includes(this.#search)) {
        const parts = seg.text.split(this.#search);
        parts.forEach((p, i) => {
          if (i) node.append(h("mark", {}, this.#search));
          node.append(p);
        });
      } else node.append(seg.text);
      if (node !== el) el.append(node);
    }
    return el;
  }

  async #download(stream: Stream): Promise<void> {
    const res = await fetch(`/v1/runs/${encodeURIComponent(this.#runId)}/logs/${stream}`, { credentials: "same-origin" });
    if (!res.ok) return;
    const body = (await res.json()) as { content: string; truncated: boolean };
    const url = URL.createObjectURL(new Blob([body.content], { type: "text/plain" }));
    const a = h("a", { href: url, download: `${this.#runId}-${stream}${body.truncated ? "-truncated" : ""}.log` });
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
  }
}
