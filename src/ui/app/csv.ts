// Delimited text (CSV, TSV) read into rows for an output's preview: quoted
// fields (with "" inside and line breaks), CRLF or LF lines. Pure, so it is
// unit-tested (csv.test.ts); the page shows every cell as a text node.

export interface Table {
  rows: string[][];
  /** More rows follow than were kept (`maxRows`), or the text was cut (`cut`) and its last line dropped. */
  truncated: boolean;
}

/**
 * The first `maxRows` rows of `text`. When `cut` says the text is only the file's start, its last
 * line may be partial: it is dropped (and the table marked truncated).
 */
export function parseDelimited(text: string, delimiter: "," | "\t", maxRows: number, cut = false): Table {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = "";
  let quoted = false;
  let i = 0;
  const endRow = () => {
    row.push(field);
    rows.push(row);
    row = [];
    field = "";
  };
  while (i < text.length && rows.length <= maxRows) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i += 2;
        continue;
      }
      if (c === '"') quoted = false;
      else field += c;
      i++;
      continue;
    }
    if (c === '"' && field === "") quoted = true;
    else if (c === delimiter) {
      row.push(field);
      field = "";
    } else if (c === "\n" || c === "\r") {
      endRow();
      if (c === "\r" && text[i + 1] === "\n") i++;
    } else field += c;
    i++;
  }
  const rest = i >= text.length;
  // A last line without its line break: a row of its own, unless the text was cut there.
  if (rest && (field !== "" || row.length) && !cut && rows.length <= maxRows) endRow();
  const truncated = rows.length > maxRows || !rest || cut;
  return { rows: rows.slice(0, maxRows), truncated };
}
