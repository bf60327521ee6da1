// The environment's install output on the run page: a collapsible "Setup"
// section of its own, never mixed into stdout and stderr. Fed live by the
// stream's `event: setup` lines while the run waits for its environment's
// build (LogView hands them over; each line once, by its n), and otherwise
// read on demand from GET /v1/runs/{id}/logs/setup when opened: the stored log
// of the build the run used (the same for every run of the key).

import { api, seg } from "./api.ts";
import { parseAnsi } from "./ansi.ts";
import { h } from "./dom.ts";

export interface SetupLine {
  n: number;
  ts: string;
  line: string;
}

interface StoredSetupLog {
  environment_key: string | null;
  status: "building" | "ready" | "failed" | null;
  content: string;
}

/** Lines kept on the page; the whole stored log is a GET away. */
export const MAX_SETUP_LINES = 5_000;
const MAX_LINE_CHARS = 4_000;

export class SetupLog {
  readonly element: HTMLDetailsElement;
  readonly #runId: string;
  readonly #log: HTMLElement;
  readonly #info: HTMLElement;
  readonly #count: HTMLElement;
  readonly #seen = new Set<number>();
  #lines = 0;
  /** Stored output shown (then live lines are not expected, and ignored). */
  #stored = false;
  #loading = false;
  /** The person opened or closed it: it is not opened for them any more. */
  #touched = false;

  constructor(runId: string, note: string | null) {
    this.#runId = runId;
    this.#log = h("div", { class: "log setup-log", id: "setup-log", role: "log", "aria-label": "Setup output", tabindex: 0 });
    this.#info = h("p", { class: "muted", id: "setup-info" }, note ?? "");
    this.#count = h("span", { class: "muted", id: "setup-count" });
    const summary = h("summary", {}, "Setup: the environment's install output ", this.#count);
    summary.addEventListener("click", () => {
      this.#touched = true;
    });
    this.element = h("details", { id: "setup", class: "setup" }, summary, this.#info, this.#log);
    this.element.addEventListener("toggle", () => {
      if (this.element.open && !this.#lines && !this.#stored) void this.load();
    });
    this.#updateCount();
  }

  /** A live line from the stream (`event: setup`). */
  add(l: SetupLine): void {
    if (this.#stored || this.#seen.has(l.n)) return;
    this.#seen.add(l.n);
    if (!this.#lines && !this.#touched) this.element.open = true; // the run is building: show what it does
    if (!this.#lines) this.#info.textContent = "Live, while the environment is built.";
    this.#append(this.#lineEl(l.line, l.n, l.ts));
    this.#lines++;
    this.#updateCount();
  }

  /** The stored log, read when the section is opened with nothing live in it. */
  async load(): Promise<void> {
    if (this.#loading) return;
    this.#loading = true;
    this.#info.textContent = "Loading…";
    try {
      const body = await api<StoredSetupLog>(`/v1/runs/${seg(this.#runId)}/logs/setup`);
      if (this.#lines) return; // live lines came meanwhile
      if (body.status === "building" && !body.content) {
        this.#info.textContent = "The environment is still being built; its output appears here as the run receives it.";
        return;
      }
      this.#stored = true;
      const lines = body.content.split("\n");
      if (lines.at(-1) === "") lines.pop();
      const frag = document.createDocumentFragment();
      for (const line of lines.slice(-MAX_SETUP_LINES)) frag.append(this.#lineEl(line, null, null));
      this.#log.replaceChildren(frag);
      this.#lines = lines.length;
      this.#info.textContent = !lines.length
        ? "No install output was kept."
        : `${body.status === "failed" ? "The build failed. " : ""}The output of the build this run's environment came from${lines.length > MAX_SETUP_LINES ? `; the last ${MAX_SETUP_LINES} lines shown` : ""}.`;
      this.#updateCount();
    } catch (err) {
      this.#info.textContent = `The setup log could not be read: ${err instanceof Error ? err.message : String(err)}`;
    } finally {
      this.#loading = false;
    }
  }

  #append(el: HTMLElement): void {
    const atBottom = this.#log.scrollHeight - this.#log.scrollTop - this.#log.clientHeight < 24;
    this.#log.append(el);
    if (this.#log.childElementCount > MAX_SETUP_LINES) this.#log.firstElementChild!.remove();
    if (atBottom) this.#log.scrollTop = this.#log.scrollHeight;
  }

  #updateCount(): void {
    this.#count.textContent = this.#lines ? `(${this.#lines} line${this.#lines === 1 ? "" : "s"})` : "";
    this.element.dataset.lines = String(this.#lines);
  }

  #lineEl(line: string, n: number | null, ts: string | null): HTMLElement {
    const el = h(
      "div",
      { class: "l setup", "data-n": n },
      n !== null ? h("span", { class: "n" }, n) : null,
      ts ? h("span", { class: "t" }, ts.slice(11, 23)) : null,
    );
    const text = line.length > MAX_LINE_CHARS ? `${line.slice(0, MAX_LINE_CHARS)}… (${line.length} characters)` : line;
    for (const s of parseAnsi(text)) el.append(s.classes.length ? h("span", { class: s.classes.join(" ") }, s.text) : s.text);
    return el;
  }
}
