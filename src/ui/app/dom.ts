// Building DOM without innerHTML: every text from the API becomes a text node.

export type Child = Node | string | number | null | undefined | false;
type AttrValue = string | number | boolean | null | undefined | ((e: Event) => void);

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, AttrValue> = {},
  ...children: (Child | Child[])[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (typeof v === "function") el.addEventListener(k.replace(/^on/, ""), v);
    else if (v === true) el.setAttribute(k, "");
    else el.setAttribute(k, String(v));
  }
  append(el, children);
  return el;
}

export function append(el: Node, children: (Child | Child[])[]): void {
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    el.appendChild(typeof c === "string" || typeof c === "number" ? document.createTextNode(String(c)) : c);
  }
}

/** Replaces the main area's content and moves focus there (for keyboard and screen-reader users). */
let shown = 0;
/** How many views show() has drawn: a view that failed tells from it whether it drew anything. */
export const shownViews = (): number => shown;

export function show(...children: (Child | Child[])[]): HTMLElement {
  shown++;
  const main = document.getElementById("main")!;
  main.replaceChildren();
  append(main, children);
  // The tab says where one is: the view's heading (a view may refine it, as the run page does with its status).
  const title = main.querySelector("h1")?.textContent;
  document.title = title ? `${title} · codeplane` : "codeplane";
  return main;
}

export const fmtTime = (iso: string | null | undefined): string => (iso ? new Date(iso).toLocaleString() : "—");

/** How long ago, in words ("3 min ago"), from `now`. */
export function fmtAgo(iso: string, now: number = Date.now()): string {
  const s = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (s < 45) return "just now";
  if (s < 3600) return `${Math.round(s / 60)} min ago`;
  if (s < 86_400) return `${Math.round(s / 3600)} h ago`;
  const days = Math.round(s / 86_400);
  // An old commit in days ("1108 d ago") makes the reader divide; months and years read at a glance.
  if (days < 45) return `${days} d ago`;
  if (days < 548) return `${Math.round(days / 30.44)} mo ago`;
  return `${Math.round(days / 365.25)} y ago`;
}

/** A relative time, the local absolute one on hover (and in the element's datetime). */
export const timeAgo = (iso: string, now?: number): HTMLElement => h("time", { datetime: iso, title: fmtTime(iso) }, fmtAgo(iso, now));

/** A status's icon (the badge beside it names the status; the icon is decoration for screen readers). */
const ICONS: Record<string, string> = { pending: "○", preprocessing: "◔", running: "▶", completed: "✓", failed: "✗", cancelled: "⊘" };
export function statusIcon(status: string): HTMLElement {
  return h("span", { class: `status-icon status-icon-${status}`, "aria-hidden": "true" }, ICONS[status] ?? "•");
}

/** An error's message, for a view's error area. */
export const viewError = (err: unknown): string => (err instanceof Error ? err.message : String(err));

export function statusBadge(status: string): HTMLElement {
  return h("span", { class: `status status-${status}`, "data-status": status }, status);
}

/** A labelled input. */
export function field(label: string, input: HTMLElement, hint?: string): HTMLLabelElement {
  return h("label", {}, label, input, hint ? h("span", { class: "muted" }, hint) : null);
}

/** Cleanup of the view being left (timers, event sources), run by the router. */
const cleanups: (() => void)[] = [];
export const onLeave = (f: () => void): void => {
  cleanups.push(f);
};
export function leaveView(): void {
  for (const f of cleanups.splice(0)) f();
}
