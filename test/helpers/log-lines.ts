// Checks on the service's JSON log lines as written (JSON.parse would hide a
// key written twice by keeping the last).

/** The keys that appear more than once in one object of a JSON text, at any depth. */
export function duplicateKeys(json: string): string[] {
  const stack: Set<string>[] = [];
  const dups: string[] = [];
  let i = 0;
  const readString = (): string => {
    let out = "";
    i++; // opening quote
    while (i < json.length && json[i] !== '"') {
      if (json[i] === "\\") {
        out += json[i]! + json[i + 1]!;
        i += 2;
      } else out += json[i++]!;
    }
    i++; // closing quote
    return out;
  };
  while (i < json.length) {
    const c = json[i]!;
    if (c === "{") {
      stack.push(new Set());
      i++;
    } else if (c === "}") {
      stack.pop();
      i++;
    } else if (c === '"') {
      const s = readString();
      let j = i;
      while (json[j] === " ") j++;
      // A string followed by ':' directly inside an object is a key.
      if (json[j] === ":" && stack.length) {
        const keys = stack[stack.length - 1]!;
        if (keys.has(s)) dups.push(s);
        keys.add(s);
      }
    } else i++;
  }
  return dups;
}

/** Lines with a key written twice, with the keys, for a readable failure. */
export function linesWithDuplicateKeys(lines: readonly string[]): { line: string; keys: string[] }[] {
  return lines.map((line) => ({ line, keys: duplicateKeys(line) })).filter((l) => l.keys.length);
}
