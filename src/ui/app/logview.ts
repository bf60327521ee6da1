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
//
// A retried run's seqs skip from one attempt's range to the next's (1, then
// 1,000,000,000, ...: logsegments.ts): in both streams' view a row is a
// position, dense over the attempts' ranges (attempt 2's rows follow attempt
// 1's last line), and the groups (loggroups.ts) are kept in positions too. An
// attempt's range is placed once the one before it is known to end: from the
// server when the page opens (its last line below the next attempt's first_seq),
// or when the stream's first line of the next attempt comes (the stream sends
// lines in seq order). A one-stream view's rows are its listed seqs, dense already.

import { parseAnsi } from "./ansi.ts";
import { h } from "./dom.ts";
import { groupMarker, LogGroups } from "./loggroups.ts";
import { SeqSegments, segmentOf, segmentStart } from "./logsegments.ts";
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

interface Shown {
  el: HTMLElement;
  key: string;
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
  readonly #groups = new LogGroups();
  /** The attempts' seq ranges, placed one after the other: a row of both streams is a position in them. */
  readonly #segments = new SeqSegments();
  /** Attempts whose end the groups were told of (in order with the markers: a group still open ends with its attempt). */
  #cuts = 0;
  /** The highest seq the page has read in order: the stored log's last when it opened, then the stream's. */
  #liveTop = 0;
  /** Group markers that came live while the stored ones were listed: added once they are. */
  #earlyMarkers: LogLine[] | null = [];
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
  #stopped = false;
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
  /** The rows in the DOM by seq, each with what it shows. */
  #shown = new Map<number, Shown>();
  /** The spacer's height in rows, the first row drawn, the scroll position and the viewport's height, as last set or seen. */
  #height = -1;
  #first = -1;
  #top = 0;
  #viewH = 0;
  #infoAt = -1000;
  #infoTimer: ReturnType<typeof setTimeout> | null = null;

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
      this.#top = this.#log.scrollTop;
      const atBottom = this.#height * ROW - this.#top - this.#viewH < ROW; // the rows drawn, not those that came since
      if (atBottom !== this.#follow) {
        this.#follow = atBottom;
        follow.checked = atBottom;
      }
      this.#schedule();
    });
    this.#log.addEventListener("click", (e) => {
      const fold = (e.target as HTMLElement).closest(".fold");
      if (fold) {
        if (this.#groups.toggle(this.#segments.pos(Number(fold.parentElement?.getAttribute("data-seq"))))) this.#schedule();
        return;
      }
      const n = (e.target as HTMLElement).closest(".n");
      const seq = Number(n?.parentElement?.getAttribute("data-seq"));
      if (!n || !seq) return;
      this.#anchor = seq;
      this.#o.onAnchor?.(seq);
      this.#schedule();
    });
    // The viewport's height, measured when it changes rather than read on each frame.
    new ResizeObserver(() => {
      this.#viewH = this.#log.clientHeight;
      this.#schedule();
    }).observe(this.#log);
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
    if (this.#infoTimer) clearTimeout(this.#infoTimer);
    this.#stopped = true;
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
      await this.#placeUpTo(first.last_seq);
    } catch {
      this.#setState("reconnecting");
      this.#retry = setTimeout(() => void this.#open(), 2000);
      return;
    }
    this.#complete = first.complete;
    this.#store.liveAfter = first.last_seq;
    this.#liveTop = Math.max(this.#liveTop, first.last_seq);
    if (this.#anchor !== null) this.#jump(this.#anchor);
    else this.#toEnd();
    this.#connect(first.last_seq);
    void this.#listGroups();
  }

  /** Places the attempts' ranges up to seq's: each one's end is its last line below the next one's first_seq. */
  async #placeUpTo(seq: number): Promise<void> {
    for (let k = this.#segments.placed - 1; k < segmentOf(seq); k = this.#segments.placed - 1) {
      const page = await this.#get<Page>(`?before=${segmentStart(k + 1)}&limit=1`);
      this.#segments.end(k, page.lines.at(-1)?.seq ?? 0);
    }
  }

  /** A group marker at seq, in seq order: in positions, after the groups of the attempts before its own were ended. */
  #addMarker(seq: number, line: string): void {
    this.#cutTo(segmentOf(seq));
    this.#groups.add(this.#segments.pos(seq), line);
  }

  /** Tells the groups that the attempts before segment k ended (each at its last line). */
  #cutTo(k: number): void {
    for (; this.#cuts < Math.min(k, this.#segments.placed - 1); this.#cuts++) this.#groups.cut(this.#segments.pos(this.#segments.endOf(this.#cuts)!));
  }

  /** The group whose title line is seq (in both streams' view only). */
  #groupAt(seq: number) {
    return this.#filter === "both" && this.#segments.has(seq) ? this.#groups.at(this.#segments.pos(seq)) : undefined;
  }

  /**
   * The stored log's group markers (GET .../logs/groups, read through an index of the lines that start
   * with "::"), in seq order; the live ones that came meanwhile are added after them.
   */
  async #listGroups(): Promise<void> {
    const found: LogLine[] = [];
    let after = 0;
    for (;;) {
      const page = await this.#get<Page>(`/groups?after=${after}&limit=${PAGE}`).catch(() => null);
      if (!page) {
        await new Promise((r) => setTimeout(r, 2000));
        if (this.#stopped) return;
        continue;
      }
      found.push(...page.lines);
      if (page.next_after === null) break;
      after = page.next_after;
    }
    // The row in view stays in view as the groups fold (the anchor's group opened again).
    const keep = this.#follow ? null : (this.#anchor ?? this.#seqAt(Math.min(Math.floor(this.#top / ROW), Math.max(0, this.#rowCount - 1))));
    const markers = [...found, ...(this.#earlyMarkers ?? [])].sort((a, b) => a.seq - b.seq);
    for (;;) {
      try {
        await this.#placeUpTo(markers.at(-1)?.seq ?? 0);
        break;
      } catch {
        await new Promise((r) => setTimeout(r, 2000));
        if (this.#stopped) return;
      }
    }
    for (const l of [...markers, ...(this.#earlyMarkers ?? []).filter((m) => !markers.includes(m))].sort((a, b) => a.seq - b.seq))
      this.#addMarker(l.seq, l.line);
    this.#earlyMarkers = null;
    this.#cutTo(this.#segments.placed - 1);
    this.element.dataset.groups = String(this.#groups.size);
    if (!this.#groups.size) return;
    if (keep) this.#jump(keep);
    else this.#schedule();
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
        // Refused or broken for good (an HTTP error): start again after the last line it sent (those after, read meanwhile, are dropped as known).
        this.#setState("reconnecting");
        this.#retry = setTimeout(() => this.#connect(this.#liveTop), 2000);
      } else this.#setState("reconnecting"); // the browser retries itself, with Last-Event-ID
    });
  }

  #setState(s: string): void {
    this.#state.textContent = s;
    this.element.dataset.state = s;
  }

  #add(l: LogLine): void {
    // The first line of a later attempt: the ones before it ended at the last line the stream sent (or have none).
    // (Before the duplicate check: a stream started again after #liveTop sends on in order.)
    for (let k = this.#segments.placed - 1; k < segmentOf(l.seq); k++) this.#segments.end(k, segmentOf(this.#liveTop) === k ? this.#liveTop : 0);
    if (l.seq > this.#liveTop) this.#liveTop = l.seq;
    if (!this.#store.addLive(l)) return;
    this.#received++;
    if (!this.#earlyMarkers) this.#cutTo(segmentOf(l.seq));
    if (l.line.startsWith("::") && groupMarker(l.line)) {
      if (this.#earlyMarkers) this.#earlyMarkers.push(l);
      else this.#addMarker(l.seq, l.line);
    }
    const rows = this.#streams[l.stream];
    if (rows) (rows.done ? rows.seqs : rows.early).push(l.seq);
    this.#schedule();
  }

  /** Draws at the next animation frame (once, however many lines and scrolls came before it). */
  #schedule(): void {
    if (!this.#frame) this.#frame = requestAnimationFrame(() => this.#draw());
  }

  get #rowCount(): number {
    if (this.#filter !== "both") return this.#streams[this.#filter]?.seqs.length ?? 0;
    // A read that reached a later attempt before it is placed: the rows end at what the stream sent until it is.
    const last = this.#segments.has(this.#store.lastSeq) ? this.#store.lastSeq : this.#liveTop;
    return this.#groups.rows(this.#segments.count(last));
  }

  #seqAt(row: number): number {
    return this.#filter === "both" ? this.#segments.seq(this.#groups.seqAt(row)) : this.#streams[this.#filter]!.seqs[row]!;
  }

  /** The row of a seq in the current view (the nearest row at or after it for a seq of the other stream). */
  #rowOf(seq: number): number {
    if (this.#filter === "both") return this.#groups.rowOf(this.#segments.pos(seq));
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

  /**
   * Draws the rows in view, touching only what changed: rows still in view keep their elements
   * (a line's element is built once while it stays in view), rows that left are removed and new
   * ones inserted in place. The scroll position is computed, not read, while following, and the
   * viewport's height is measured only when it changes (a ResizeObserver), so a frame forces at
   * most one small layout (the scroll position's, inside the log's own containment).
   */
  #draw(): void {
    this.#frame = 0;
    if (this.#paused) return this.#updateInfo();
    const count = this.#rowCount;
    if (count !== this.#height) {
      this.#height = count;
      this.#spacer.style.height = `${count * ROW}px`;
    }
    if (!this.#viewH) this.#viewH = this.#log.clientHeight;
    let top: number;
    if (this.#follow) {
      top = Math.max(0, count * ROW - this.#viewH);
      if (top !== this.#top) {
        this.#top = top;
        this.#log.scrollTop = top;
      }
    } else top = this.#top;
    // Following, the rows above the view are not drawn ahead: at 1,000 lines/s they would be built and pushed out on every frame.
    const first = Math.max(0, Math.floor(top / ROW) - (this.#follow && !this.#complete ? 2 : OVERSCAN));
    const last = Math.min(count, Math.ceil((top + this.#viewH) / ROW) + OVERSCAN);
    const current = this.#matches[this.#current];
    const want: HTMLElement[] = [];
    const shown = new Map<number, Shown>();
    for (let row = first; row < last; row++) {
      const seq = this.#seqAt(row);
      const { el, key } = this.#row(seq, current);
      shown.set(seq, { el, key });
      want.push(el);
    }
    for (const [seq, s] of this.#shown) if (shown.get(seq)?.el !== s.el) s.el.remove();
    let at = this.#rows.firstChild;
    for (const el of want) {
      if (el === at) at = at.nextSibling;
      else this.#rows.insertBefore(el, at);
    }
    this.#shown = shown;
    if (first !== this.#first) {
      this.#first = first;
      this.#rows.style.transform = `translateY(${first * ROW}px)`;
    }
    this.#updateInfo();
  }

  /** A row's element, the one already drawn while what it shows is the same; reading its block if it is not here. */
  #row(seq: number, current: number | undefined): Shown {
    const l = this.#store.get(seq);
    if (l === undefined && this.#store.wants(seq)) void this.#readBlock(LogStore.blockOf(seq));
    // What the row shows: its element is kept while this stays the same.
    const g = this.#groupAt(seq);
    const key = l
      ? `l${seq === this.#anchor ? "a" : ""}${seq === current ? "c" : ""}${g ? `g${g.collapsed ? 1 : 0}${g.end ?? ""}` : ""}:${this.#query}`
      : l === null
        ? "g"
        : "p";
    const old = this.#shown.get(seq);
    const el =
      old && old.key === key
        ? old.el
        : l
          ? this.#lineEl(l, seq === this.#anchor, seq === current)
          : h("div", { class: l === null ? "gap" : "pending", "data-seq": seq }, l === null ? "" : "…");
    return { el, key };
  }

  async #readBlock(k: number): Promise<void> {
    this.#store.loading(k);
    try {
      const page = await this.#get<Page>(`?after=${k * BLOCK}&limit=${BLOCK}`);
      this.#store.fill(k, page.lines, page.last_seq);
      // The log grew into a later attempt's range (the stream has not sent it yet): its rows come once it is placed.
      if (!this.#segments.has(this.#store.lastSeq))
        void this.#placeUpTo(this.#store.lastSeq).then(
          () => this.#schedule(),
          () => {},
        );
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
    if (this.#filter === "both") this.#groups.reveal(this.#segments.pos(seq));
    this.#follow = false;
    this.#followBox.checked = false;
    this.#height = this.#rowCount;
    this.#spacer.style.height = `${this.#height * ROW}px`;
    this.#log.scrollTop = Math.max(0, this.#rowOf(seq) * ROW - this.#log.clientHeight / 3);
    this.#top = this.#log.scrollTop;
    this.#schedule();
  }

  #setFilter(f: "both" | Stream): void {
    const seq = this.#seqAt(Math.min(Math.floor(this.#log.scrollTop / ROW), Math.max(0, this.#rowCount - 1)));
    this.#filter = f;
    if (f !== "both" && !this.#streams[f]) void this.#listStream(f);
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

  /** The figures on the section (read by tests and benchmarks), and the line count in words, rewritten at most 4 times a second. */
  #updateInfo(): void {
    const d = this.element.dataset;
    d.lastSeq = String(this.#store.lastSeq);
    d.received = String(this.#received);
    d.duplicates = String(this.#store.duplicates);
    d.connections = String(this.#connections);
    d.opens = String(this.#opens);
    d.blocks = String(this.#store.blockCount);
    const listing = this.#filter !== "both" && !this.#streams[this.#filter]?.done ? ` (listing ${this.#filter}…)` : "";
    const text = `${this.#rowCount} ${this.#filter === "both" ? "lines" : `${this.#filter} lines`}${listing}${this.#paused ? " (paused)" : ""}${
      this.#complete ? "" : " so far"
    } · line numbers are the run's sequence numbers, shared by stdout and stderr${this.#segments.placed > 1 ? " (each attempt's from its own first_seq)" : ""}`;
    if (text === this.#info.textContent) return;
    const wait = this.#infoAt + 250 - performance.now();
    if (wait > 0) {
      // A trailing update, so the last count is always shown.
      this.#infoTimer ??= setTimeout(() => {
        this.#infoTimer = null;
        this.#updateInfo();
      }, wait);
      return;
    }
    this.#infoAt = performance.now();
    this.#info.textContent = text;
  }

  #lineEl(l: LogLine, anchored: boolean, current: boolean): HTMLElement {
    const el = h(
      "div",
      { class: `l ${l.stream}${anchored ? " anchored" : ""}${current ? " current" : ""}`, id: `L${l.seq}`, "data-seq": l.seq, "data-stream": l.stream },
      h("span", { class: "n", title: "Link to this line" }, l.seq),
      h("span", { class: "t" }, l.ts.slice(11, 23)),
      l.stream === "stderr" ? h("span", { class: "s", title: "stderr" }, "err") : null,
    );
    const g = this.#groupAt(l.seq);
    if (g) {
      // A group's title row: a button opens and closes it (a group still being written stays open).
      const lines = g.end === null ? "still being written" : `${g.end - g.start} lines`;
      el.classList.add("group");
      el.append(
        h(
          "button",
          {
            type: "button",
            class: "fold",
            "aria-expanded": String(!g.collapsed),
            disabled: g.end === null || g.end === g.start,
            "aria-label": `${g.collapsed ? "Show" : "Hide"} the lines of group ${g.title}`,
          },
          g.collapsed ? "▸" : "▾",
        ),
        h("span", { class: "gt" }, g.title),
        h("span", { class: "gn" }, ` (${lines})`),
      );
      return el;
    }
    if (groupMarker(l.line)?.kind === "end") el.classList.add("endgroup");
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
