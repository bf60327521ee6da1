// What cpl exits with (docs/users/cli.md, "Exit codes"), and the error that carries it.

export const EXIT = {
  ok: 0,
  /** The server refused the request or failed, or the network did. */
  failed: 1,
  /** Bad arguments. */
  usage: 2,
  /** Not signed in, the credential does not work (401), or it lacks a scope (403). */
  auth: 3,
  /** What was named does not exist (404, or no repository of that name). */
  notFound: 4,
  /** A followed run ended without an exit code of its own (cancelled, timed out, could not start). */
  noExitCode: 125,
  /** Interrupted (Ctrl-C): the run goes on on the server. */
  interrupted: 130,
} as const;

export class CliError extends Error {
  override name = "CliError";
  readonly exitCode: number;
  constructor(message: string, exitCode: number = EXIT.failed) {
    super(message);
    this.exitCode = exitCode;
  }
}

/** The server could not be reached (or the connection broke): worth another try when following a stream. */
export class NetworkError extends CliError {
  override name = "NetworkError";
}

/** One of the contract's 422 items: `{"loc": [...], "msg": "...", "type": "..."}`. */
interface DetailItem {
  loc?: unknown[];
  msg?: string;
}

/** The API's `detail` as lines a person reads: a string as it is, a 422 list as `loc: msg` per item. */
export function renderDetail(detail: unknown): string {
  if (typeof detail === "string") return detail;
  if (Array.isArray(detail)) {
    return detail
      .map((item: DetailItem) => {
        const loc = Array.isArray(item?.loc) ? item.loc.filter((p) => p !== "body").join(".") : "";
        return `  ${loc ? `${loc}: ` : ""}${item?.msg ?? JSON.stringify(item)}`;
      })
      .join("\n");
  }
  return JSON.stringify(detail);
}

/** An answer of the API that was not a success, with its `detail`. */
export class ApiError extends CliError {
  override name = "ApiError";
  readonly status: number;
  readonly detail: unknown;
  constructor(status: number, detail: unknown, method: string, path: string) {
    const text = renderDetail(detail);
    super(
      Array.isArray(detail) ? `${method} ${path}: ${status} invalid request:\n${text}` : `${method} ${path}: ${status} ${text}`,
      status === 401 || status === 403 ? EXIT.auth : status === 404 ? EXIT.notFound : EXIT.failed,
    );
    this.status = status;
    this.detail = detail;
  }
}

/** The message of an OAuth error body (`error_description`, else `error`), or of the API's `detail`. */
export function oauthMessage(body: Record<string, unknown>, fallback: string | number): string {
  for (const k of ["error_description", "error", "detail"]) if (typeof body[k] === "string" && body[k]) return body[k];
  return String(fallback);
}
