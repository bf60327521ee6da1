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
export function show(...children: (Child | Child[])[]): HTMLElement {
  const main = document.getElementById("main")!;
  main.replaceChildren();
  append(main, children);
  return main;
}

export const fmtTime = (iso: string | null | undefined): string => (iso ? new Date(iso).toLocaleString() : "—");

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
