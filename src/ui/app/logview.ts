// The run's whole output: the stored log read from the server by sequence as
// the rows on screen need it (LogStore), drawn as a virtual list of fixed-height
// rows (only the rows in view and a few around them are in the DOM), and the
// live lines of an EventSource on /v1/runs/{id}/logs/stream (the session cookie
// authenticates it), opened after the last stored line and appended once per
// animation frame. A run of a million lines opens at its first or its last line
// with one read of a thousand lines.
//
// Rows are the run's sequence numbers (stdout and stderr interleaved as the run
// wrote them); with one stream chosen, that stream's seqs, listed from the
// server (GET .../logs/stdout|stderr?after=&limit=) once and then kept up to
// date by the live lines. Search is the server's, over the whole stored log
// (GET .../logs/search): matches are highlighted and jumped to. A line's number
// is its anchor (#/runs/<id>#L<seq>, shareable). Copy and download read the
// whole log from the server. Resuming: the browser's own reconnection sends
// Last-Event-ID; when the stream is closed for good by an error, a new one
// starts with ?after=<last seq>; lines already known are dropped by seq.

import { parseAnsi } from "./ansi.ts";
import { h } from "./dom.ts";
import { BLOCK, LogStore, type LogLine, type Stream } from "./logstore.ts";
import type { TimelineEvent } from "./phases.ts";
import type { SetupLine } from "./setuplog.ts";

/** A row's height in pixels (.log.virtual .l in app.css). */
export const ROW = 18;
const OVERSCAN = 30;
const MAX_LINE_CHARS = 4_000;
const PAGE = 5000;
const SEARCH_LIMIT = 500;

export interface LogViewOptions {
  onStatus?: (status: string) => void;
  /** The environment's install output (`event: setup`), which stays out of this view's stdout and stderr. */
  onSetup?: (line: SetupLine) => void;
  /** The run's whole timeline, as GET /v1/runs/{id} has it (`event: timeline`): on connect and each time it grows. */
  onTimeline?: (timeline: TimelineEvent[]) => void;
  /** The line to open at (an anchor's #L<seq>); the log's end otherwise. */
  line?: number | null;
  /** A line's anchor was chosen (its number clicked): the page puts it in the address. */
  onAnchor?: (seq: number) => void;
  /** The run's exit code, for "jump to first error" when it wrote nothing on stderr. */
  exitCode?: () => number | null;
}

interface Page {
  lines: LogLine[];
  next_after: number | null;
  last_seq: number;
  complete: boolean;
}

/** One stream's seqs, listed from the server, then grown by live lines. */
interface StreamRows {
  stream: Stream;
  seqs: number[];
  done: boolean;
  /** Live lines of the stream that came while the list was read: added once it is. */
  early: number[];
}

export class LogView {
  readonly element: HTMLElement;
  readonly #runId: string;
  readonly #o: LogViewOptions;
  readonly #store = new LogStore();
  readonly #log: HTMLElement;
  readonly #spacer: HTMLElement;
  readonly #rows: HTMLElement;
  readonly #info: HTMLElement;
  readonly #state: HTMLElement;
  readonly #searchInfo: HTMLElement;
  readonly #followBox: HTMLInputElement;
  #es: EventSource | null = null;
  #frame = 0;
  #retry: ReturnType<typeof setTimeout> | null = null;
  #filter: "both" | Stream = "both";
  #streams: Partial<Record<Stream, StreamRows>> = {};
  #follow = true;
  #paused = false;
  #ended = false;
  #complete = false;
  #received = 0;
  #connections = 0;
  #opens = 0;
  #anchor: number | null = null;
  #query = "";
  #matches: number[] = [];
  #matchMore = false;
  #current = -1;
  #searchSeq = 0;
  #drawn = "";

  constructor(runId: string, o: LogViewOptions = {}) {
    this.#runId = runId;
    this.#o = o;
    this.#anchor = o.line ?? null;
    this.#follow = this.#anchor === null;
    this.#spacer = h("div", { class: "spacer" });
    this.#rows = h("div", { class: "rows" });
    this.#log = h("div", { class: "log virtual", id: "log", role: "log", "aria-label": "Run output", tabindex: 0 }, this.#spacer, this.#rows);
    this.#info = h("p", { class: "muted", id: "log-info" });
    this.#state = h("span", { id: "log-state", "aria-live": "polite" }, "connecting");
    this.#searchInfo = h("span", { id: "log-search-info", "aria-live": "polite" });
    const filter = h(
      "select",
      { id: "log-filter" },
      h("option", { value: "both" }, "stdout and stderr"),
      h("option", { value: "stdout" }, "stdout"),
      h("option", { value: "stderr" }, "stderr"),
    );
    filter.addEventListener("change", () => this.#setFilter(filter.value as "both" | Stream));
    const search = h("input", { id: "log-search", type: "search", placeholder: "search the whole log" });
    let debounce: ReturnType<typeof setTimeout> | null = null;
    search.addEventListener("input", () => {
      if (debounce) clearTimeout(debounce);
      debounce = setTimeout(() => void this.#search(search.value), 250);
    });
    search.addEventListener("keydown", (e) => {
      if (e.key !== "Enter") return;
      e.preventDefault();
      if (debounce) clearTimeout(debounce);
      if (search.value === this.#query && this.#matches.length) this.#step(e.shiftKey ? -1 : 1);
      else void this.#search(search.value);
    });
    const follow = h("input", { id: "log-follow", type: "checkbox", checked: this.#follow });
    this.#followBox = follow;
    follow.addEventListener("change", () => {
      this.#follow = follow.checked;
      if (this.#follow) this.#toEnd();
    });
    this.#log.addEventListener("scroll", () => {
      // Scrolling up to read stops following; scrolling back to the bottom follows again.
      const atBottom = this.#log.scrollHeight - this.#log.scrollTop - this.#log.clientHeight < ROW;
      if (atBottom !== this.#follow) {
        this.#follow = atBottom;
        follow.checked = atBottom;
      }
      this.#schedule();
    });
    this.#log.addEventListener("click", (e) => {
      const n = (e.target as HTMLElement).closest(".n");
      const seq = Number(n?.parentElement?.getAttribute("data-seq"));
      if (!n || !seq) return;
      this.#anchor = seq;
      this.#o.onAnchor?.(seq);
      this.#drawn = "";
      this.#schedule();
    });
    const pause = h("button", { id: "log-pause", type: "button", "aria-pressed": "false" }, "Pause");
    pause.addEventListener("click", () => {
      this.#paused = !this.#paused;
      pause.textContent = this.#paused ? "Resume" : "Pause";
      pause.setAttribute("aria-pressed", String(this.#paused));
      if (!this.#paused) this.#schedule();
    });
    const ts = h("input", { id: "log-ts", type: "checkbox", checked: true });
    ts.addEventListener("change", () => this.#log.classList.toggle("no-ts", !ts.checked));
    const ln = h("input", { id: "log-ln", type: "checkbox", checked: true });
    ln.addEventListener("change", () => this.#log.classList.toggle("no-ln", !ln.checked));
    const button = (id: string, label: string, f: () => unknown) => h("button", { type: "button", id, onclick: () => void f() }, label);
    this.element = h(
      "section",
      { "aria-label": "Output" },
      h(
        "div",
        { class: "toolbar" },
        h("label", { for: "log-filter" }, "Streams", filter),
        h("label", { for: "log-search" }, "Search", search),
        button("log-search-prev", "Previous match", () => this.#step(-1)),
        button("log-search-next", "Next match", () => this.#step(1)),
        this.#searchInfo,
      ),
      h(
        "div",
        { class: "toolbar" },
        h("label", { class: "check" }, follow, "Follow"),
        pause,
        h("label", { class: "check" }, ts, "Timestamps (UTC)"),
        h("label", { class: "check" }, ln, "Line numbers"),
        button("log-top", "First line", () => this.#jump(1)),
        button("log-end", "Last line", () => this.#toEnd()),
        button("log-first-error", "First error", () => this.#firstError()),
        button("log-copy", "Copy all", () => this.#copyAll()),
        h(
          "span",
          {},
          "Download: ",
          button("download-all", "all", () => this.#downloadAll()),
          " ",
          ...(["stdout", "stderr"] as const).map((s) => button(`download-${s}`, s, () => this.#download(s))),
        ),
        this.#state,
      ),
      this.#info,
      this.#log,
    );
  }

  start(): void {
    void this.#open();
  }

  stop(): void {
    this.#es?.close();
    this.#es = null;
    if (this.#retry) clearTimeout(this.#retry);
    cancelAnimationFrame(this.#frame);
    this.#ended = true;
  }

  get #base(): string {
    return `/v1/runs/${encodeURIComponent(this.#runId)}/logs`;
  }

  async #get<T>(path: string): Promise<T> {
    const res = await fetch(`${this.#base}${path}`, { credentials: "same-origin" });
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    return (await res.json()) as T;
  }

  /** Reads the block the page opens at (the anchor's, or the log's end), then follows live after the last stored line. */
  async #open(): Promise<void> {
    this.#setState("loading");
    let first: Page;
    try {
      if (this.#anchor !== null) {
        const k = LogStore.blockOf(this.#anchor);
        first = await this.#get<Page>(`?after=${k * BLOCK}&limit=${BLOCK}`);
        this.#store.fill(k, first.lines, first.last_seq);
      } else {
        first = await this.#get<Page>(`?before=${Number.MAX_SAFE_INTEGER}&limit=${BLOCK}`);
        // The end: the last block, and the one before it when the end's lines start in it.
        const byBlock = new Map<number, LogLine[]>();
        for (const l of first.lines) byBlock.set(LogStore.blockOf(l.seq), [...(byBlock.get(LogStore.blockOf(l.seq)) ?? []), l]);
        const last = first.last_seq ? LogStore.blockOf(first.last_seq) : -1;
        if (last >= 0) this.#store.fill(last, byBlock.get(last) ?? [], first.last_seq);
      }
    } catch {
      this.#setState("reconnecting");
      this.#retry = setTimeout(() => void this.#open(), 2000);
      return;
    }
    this.#complete = first.complete;
    this.#store.liveAfter = first.last_seq;
    if (this.#anchor !== null) this.#jump(this.#anchor);
    else this.#toEnd();
    this.#connect(first.last_seq);
  }

  #connect(after: number): void {
    const es = new EventSource(`${this.#base}/stream${after ? `?after=${after}` : ""}`, { withCredentials: true });
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
      this.#complete = true;
      es.close();
      this.#schedule();
      this.#setState(`ended: ${d.status}${d.exit_code !== null ? `, exit code ${d.exit_code}` : ""}`);
      this.#o.onStatus?.(d.status);
    });
    es.addEventListener("error", () => {
      if (this.#ended) return;
      if (es.readyState === EventSource.CLOSED) {
        // Refused or broken for good (an HTTP error): start again after the last line known.
        this.#setState("reconnecting");
        this.#retry = setTimeout(() => this.#connect(this.#store.lastSeq), 2000);
      } else this.#setState("reconnecting"); // the browser retries itself, with Last-Event-ID
    });
  }

  #setState(s: string): void {
    this.#state.textContent = s;
    this.element.dataset.state = s;
  }

  #add(l: LogLine): void {
    if (!this.#store.addLive(l)) return;
    this.#received++;
    const rows = this.#streams[l.stream];
    if (rows) (rows.done ? rows.seqs : rows.early).push(l.seq);
    this.#schedule();
  }

  /** Draws at the next animation frame (once, however many lines and scrolls came before it). */
  #schedule(): void {
    if (!this.#frame) this.#frame = requestAnimationFrame(() => this.#draw());
  }

  get #rowCount(): number {
    return this.#filter === "both" ? this.#store.lastSeq : (this.#streams[this.#filter]?.seqs.length ?? 0);
  }

  #seqAt(row: number): number {
    return this.#filter === "both" ? row + 1 : this.#streams[this.#filter]!.seqs[row]!;
  }

  /** The row of a seq in the current view (the nearest row at or after it for a seq of the other stream). */
  #rowOf(seq: number): number {
    if (this.#filter === "both") return seq - 1;
    const seqs = this.#streams[this.#filter]!.seqs;
    let lo = 0;
    let hi = seqs.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (seqs[mid]! < seq) lo = mid + 1;
      else hi = mid;
    }
    return Math.min(lo, Math.max(0, seqs.length - 1));
  }

  #draw(): void {
    this.#frame = 0;
    if (this.#paused) return this.#updateInfo();
    const count = this.#rowCount;
    this.#spacer.style.height = `${count * ROW}px`;
    if (this.#follow) this.#log.scrollTop = this.#log.scrollHeight;
    const top = this.#log.scrollTop;
    const first = Math.max(0, Math.floor(top / ROW) - OVERSCAN);
    const last = Math.min(count, Math.ceil((top + this.#log.clientHeight) / ROW) + OVERSCAN);
    const current = this.#matches[this.#current];
    const parts: string[] = [];
    const els: HTMLElement[] = [];
    for (let row = first; row < last; row++) {
      const seq = this.#seqAt(row);
      const l = this.#store.get(seq);
      if (l === undefined && this.#store.wants(seq)) void this.#readBlock(LogStore.blockOf(seq));
      parts.push(l ? `${seq}` : l === null ? `${seq}g` : `${seq}?`);
      els.push(
        l
          ? this.#lineEl(l, seq === this.#anchor, seq === current)
          : h("div", { class: l === null ? "gap" : "pending", "data-seq": seq }, l === null ? "" : "…"),
      );
    }
    // Rebuilt only when the rows drawn or what they show changed.
    const key = `${first}:${this.#query}:${this.#anchor}:${current}:${parts.join(",")}`;
    if (key !== this.#drawn) {
      this.#drawn = key;
      this.#rows.style.transform = `translateY(${first * ROW}px)`;
      this.#rows.replaceChildren(...els);
    }
    this.#updateInfo();
  }

  async #readBlock(k: number): Promise<void> {
    this.#store.loading(k);
    try {
      const page = await this.#get<Page>(`?after=${k * BLOCK}&limit=${BLOCK}`);
      this.#store.fill(k, page.lines, page.last_seq);
    } catch {
      this.#store.failed(k);
      return;
    }
    this.#schedule();
  }

  #toEnd(): void {
    this.#follow = true;
    this.#followBox.checked = true;
    this.#schedule();
  }

  /** Scrolls so the row of seq is in view, a third from the top, and stops following. */
  #jump(seq: number): void {
    this.#follow = false;
    this.#followBox.checked = false;
    this.#spacer.style.height = `${this.#rowCount * ROW}px`;
    this.#log.scrollTop = Math.max(0, this.#rowOf(seq) * ROW - this.#log.clientHeight / 3);
    this.#drawn = "";
    this.#schedule();
  }

  #setFilter(f: "both" | Stream): void {
    const seq = this.#seqAt(Math.min(Math.floor(this.#log.scrollTop / ROW), Math.max(0, this.#rowCount - 1)));
    this.#filter = f;
    if (f !== "both" && !this.#streams[f]) void this.#listStream(f);
    this.#drawn = "";
    if (this.#follow) this.#schedule();
    else if (seq) this.#jump(seq);
  }

  /** Lists a stream's seqs from the server, page after page, then lets live lines grow the list. */
  async #listStream(stream: Stream): Promise<void> {
    const rows: StreamRows = { stream, seqs: [], done: false, early: [] };
    this.#streams[stream] = rows;
    let after = 0;
    for (;;) {
      let page: Page;
      try {
        page = await this.#get<Page>(`/${stream}?after=${after}&limit=${PAGE}`);
      } catch {
        await new Promise((r) => setTimeout(r, 2000));
        continue;
      }
      for (const l of page.lines) rows.seqs.push(l.seq);
      this.#schedule();
      if (page.next_after === null) break;
      after = page.next_after;
    }
    const lastListed = rows.seqs.at(-1) ?? 0;
    for (const s of rows.early.sort((a, b) => a - b)) if (s > lastListed) rows.seqs.push(s);
    rows.early = [];
    rows.done = true;
    this.#schedule();
  }

  async #search(q: string): Promise<void> {
    const mine = ++this.#searchSeq;
    this.#query = q;
    this.#matches = [];
    this.#current = -1;
    this.#matchMore = false;
    this.#drawn = "";
    if (!q) {
      this.#searchInfo.textContent = "";
      this.#schedule();
      return;
    }
    this.#searchInfo.textContent = "searching…";
    const stream = this.#filter === "both" ? "" : `&stream=${this.#filter}`;
    let after = 0;
    for (;;) {
      const res = await this.#get<{ items: LogLine[]; next_after: number | null }>(
        `/search?q=${encodeURIComponent(q)}${stream}&after=${after}&limit=${SEARCH_LIMIT}`,
      ).catch(() => null);
      if (mine !== this.#searchSeq) return;
      if (!res) {
        this.#searchInfo.textContent = "search failed";
        return;
      }
      this.#matches.push(...res.items.map((l) => l.seq));
      if (this.#current < 0 && this.#matches.length) this.#step(1);
      if (res.next_after === null) break;
      if (this.#matches.length >= SEARCH_LIMIT) {
        this.#matchMore = true;
        break;
      }
      after = res.next_after;
    }
    this.#showMatches();
    this.#schedule();
  }

  #showMatches(): void {
    const n = this.#matches.length;
    this.#searchInfo.textContent = !n
      ? "no match in the whole log"
      : `match ${this.#current + 1} of ${n}${this.#matchMore ? "+ (the first " + SEARCH_LIMIT + " shown)" : ""}, line ${this.#matches[this.#current]}`;
  }

  #step(d: number): void {
    if (!this.#matches.length) return;
    this.#current = (this.#current + d + this.#matches.length) % this.#matches.length;
    this.#jump(this.#matches[this.#current]!);
    this.#showMatches();
  }

  /** The first stderr line; with none, the last line of a run that failed. */
  async #firstError(): Promise<void> {
    const page = await this.#get<Page>(`/stderr?after=0&limit=1`).catch(() => null);
    const seq = page?.lines[0]?.seq;
    if (seq) {
      if (this.#filter === "stdout") this.#setFilter("both");
      this.#anchor = seq;
      this.#o.onAnchor?.(seq);
      this.#jump(seq);
    } else if ((this.#o.exitCode?.() ?? 0) !== 0 && this.#store.lastSeq) this.#jump(this.#store.lastSeq);
    else this.#searchInfo.textContent = "nothing on stderr";
  }

  /** The whole stored log, both streams in order, read page by page. */
  async #wholeLog(): Promise<string> {
    const out: string[] = [];
    let after = 0;
    for (;;) {
      const page = await this.#get<Page>(`?after=${after}&limit=${PAGE}`);
      for (const l of page.lines) out.push(`${l.line}\n`);
      if (page.next_after === null) return out.join("");
      after = page.next_after;
    }
  }

  async #copyAll(): Promise<void> {
    const text = await this.#wholeLog();
    await navigator.clipboard.writeText(text).then(
      () => (this.#searchInfo.textContent = `copied ${text.length} characters`),
      () => (this.#searchInfo.textContent = "the browser refused to copy: download instead"),
    );
  }

  #updateInfo(): void {
    const d = this.element.dataset;
    d.lastSeq = String(this.#store.lastSeq);
    d.received = String(this.#received);
    d.duplicates = String(this.#store.duplicates);
    d.connections = String(this.#connections);
    d.opens = String(this.#opens);
    d.blocks = String(this.#store.blockCount);
    const listing = this.#filter !== "both" && !this.#streams[this.#filter]?.done ? ` (listing ${this.#filter}…)` : "";
    this.#info.textContent = `${this.#rowCount} ${this.#filter === "both" ? "lines" : `${this.#filter} lines`}${listing}${this.#paused ? " (paused)" : ""}${
      this.#complete ? "" : " so far"
    } · line numbers are the run's sequence numbers, shared by stdout and stderr`;
  }

  #lineEl(l: LogLine, anchored: boolean, current: boolean): HTMLElement {
    const el = h(
      "div",
      { class: `l ${l.stream}${anchored ? " anchored" : ""}${current ? " current" : ""}`, id: `L${l.seq}`, "data-seq": l.seq, "data-stream": l.stream },
      h("span", { class: "n", title: "Link to this line" }, l.seq),
      h("span", { class: "t" }, l.ts.slice(11, 23)),
      l.stream === "stderr" ? h("span", { class: "s", title: "stderr" }, "err") : null,
    );
    const text = l.line.length > MAX_LINE_CHARS ? `${l.line.slice(0, MAX_LINE_CHARS)}… (${l.line.length} characters)` : l.line;
    const needle = this.#query.toLowerCase();
    for (const seg of parseAnsi(text)) {
      const node = seg.classes.length ? h("span", { class: seg.classes.join(" ") }) : el;
      if (needle && seg.text.toLowerCase().includes(needle)) {
        const lower = seg.text.toLowerCase();
        let at = 0;
        for (let i = lower.indexOf(needle); i >= 0; i = lower.indexOf(needle, at)) {
          node.append(seg.text.slice(at, i), h("mark", {}, seg.text.slice(i, i + needle.length)));
          at = i + needle.length;
        }
        node.append(seg.text.slice(at));
      } else node.append(seg.text);
      if (node !== el) el.append(node);
    }
    return el;
  }

  #save(text: string, name: string): void {
    const url = URL.createObjectURL(new Blob([text], { type: "text/plain" }));
    const a = h("a", { href: url, download: name });
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
  }

  async #downloadAll(): Promise<void> {
    this.#save(await this.#wholeLog(), `${this.#runId}.log`);
  }

  async #download(stream: Stream): Promise<void> {
    const res = await fetch(`${this.#base}/${stream}`, { credentials: "same-origin" });
    if (!res.ok) return;
    const body = (await res.json()) as { content: string; truncated: boolean };
    this.#save(body.content, `${this.#runId}-${stream}${body.truncated ? "-truncated" : ""}.log`);
  }
}
