/** An error with its chain of causes: fetch's "fetch failed" alone does not say whether the connection was refused, reset or timed out. */
export function describeError(err: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = err, depth = 0; e !== undefined && e !== null && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    parts.push(`${String(e)}${typeof code === "string" && !String(e).includes(code) ? ` [${code}]` : ""}`);
  }
  return parts.join(" <- ");
}
