// ANSI SGR colour codes to styled segments (classes, not inline styles: the
// CSP allows no inline style). 16 colours, bold, italic, underline; 256-colour
// and true-colour codes are consumed and shown uncoloured; other escape
// sequences (cursor movement, OSC titles) are dropped.

export interface Segment {
  text: string;
  classes: string[];
}

interface Style {
  fg: number | null;
  bg: number | null;
  bold: boolean;
  italic: boolean;
  underline: boolean;
}

const plain = (): Style => ({ fg: null, bg: null, bold: false, italic: false, underline: false });

function classesOf(s: Style): string[] {
  const c: string[] = [];
  if (s.fg !== null) c.push(`f${s.fg}`);
  if (s.bg !== null) c.push(`b${s.bg}`);
  if (s.bold) c.push("a-b");
  if (s.italic) c.push("a-i");
  if (s.underline) c.push("a-u");
  return c;
}

function apply(style: Style, params: number[]): void {
  for (let i = 0; i < params.length; i++) {
    const p = params[i]!;
    if (p === 0) Object.assign(style, plain());
    else if (p === 1) style.bold = true;
    else if (p === 3) style.italic = true;
    else if (p === 4) style.underline = true;
    else if (p === 22) style.bold = false;
    else if (p === 23) style.italic = false;
    else if (p === 24) style.underline = false;
    else if ((p >= 30 && p <= 37) || (p >= 90 && p <= 97)) style.fg = p;
    else if (p === 39) style.fg = null;
    else if (p >= 40 && p <= 47) style.bg = p;
    else if (p >= 100 && p <= 107) style.bg = p - 60;
    else if (p === 49) style.bg = null;
    else if (p === 38 || p === 48) {
      // 38;5;n or 38;2;r;g;b: skipped (not one of the 16 colours).
      const mode = params[i + 1];
      i += mode === 5 ? 2 : mode === 2 ? 4 : 1;
    }
  }
}

// CSI sequences (ESC [ ... final byte) and OSC sequences (ESC ] ... BEL or ESC \).
const ESCAPE = /\u001b\[([0-9;?]*)([@-~])|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)|\u001b[@-Z\\-_]/g;

/** Splits a line into styled segments. `state` carries the style from one line to the next, as a terminal would. */
export function parseAnsi(line: string, state: Style = plain()): Segment[] {
  const out: Segment[] = [];
  let last = 0;
  const push = (text: string) => {
    if (text) out.push({ text, classes: classesOf(state) });
  };
  for (const m of line.matchAll(ESCAPE)) {
    push(line.slice(last, m.index));
    last = m.index + m[0].length;
    if (m[2] === "m")
      apply(
        state,
        (m[1] || "0").split(";").map((x) => (x === "" ? 0 : Number(x))),
      );
  }
  push(line.slice(last));
  return out;
}

export const newAnsiState = plain;
export type AnsiState = Style;
