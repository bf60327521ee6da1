import type { CallToolResult } from "@modelcontextprotocol/server";

/**
 * A tool's output whose text is sent once, as a text block of its own, beside
 * its structured part (read_file: the file's text, and what it is as
 * structuredContent), rather than inside the structured part and again in
 * that part's JSON.
 */
export class WithText<T> {
  readonly structured: T;
  readonly text: string;
  constructor(structured: T, text: string) {
    this.structured = structured;
    this.text = text;
  }
}

const errorText = (s: string): CallToolResult => ({ content: [{ type: "text", text: s }], isError: true });

/** A tool error: its text, with `isError: true`. */
export const toolErrorResult = errorText;

/** A WithText output as a result: the structured part's JSON first (as every tool's first block is), then the text. */
export const withTextResult = (out: WithText<unknown>): CallToolResult => ({
  content: [
    { type: "text", text: JSON.stringify(out.structured) },
    { type: "text", text: out.text },
  ],
  structuredContent: out.structured,
});

/** The bytes a WithText output's result takes as JSON, whole. */
export const withTextBytes = (out: WithText<unknown>): number => Buffer.byteLength(JSON.stringify(withTextResult(out)));

/**
 * The result of a tool call. An ordinary output goes as structured content
 * and, for clients that read only content, the same JSON as a text block (as
 * MCP asks of a tool with an output schema); its JSON is at most `maxBytes`.
 * A WithText output is at most `maxBytes` whole. A result over the limit is
 * never sent: the tools that can return much (list_files, get_run_logs,
 * read_file) size their pages to the limit first, so this answers only what
 * they could not shrink.
 */
export function resultOf(out: unknown, maxBytes: number): CallToolResult {
  const tooLarge = () =>
    errorText(`The result is larger than the server's limit of ${maxBytes} bytes (CODEPLANE_MCP_MAX_RESULT_BYTES): ask for less, e.g. a smaller \`limit\``);
  if (out instanceof WithText) return withTextBytes(out) > maxBytes ? tooLarge() : withTextResult(out);
  const json = JSON.stringify(out);
  if (Buffer.byteLength(json) > maxBytes) return tooLarge();
  return { content: [{ type: "text", text: json }], structuredContent: out };
}
