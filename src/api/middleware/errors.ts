import type { Middleware } from "koa";
import { DomainError, DomainValidationError, type ErrorKind } from "../../domain/errors.ts";
import type { Logger } from "../../logger.ts";
import { HttpError } from "../http-error.ts";

const STATUS: Record<ErrorKind, number> = {
  bad_request: 400,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  payload_too_large: 413,
  unavailable: 503,
};

function isBodyParserError(err: unknown): err is { status: number; type?: string } & Error {
  return err instanceof Error && typeof (err as { status?: unknown }).status === "number";
}

/** A body whose Content-Encoding (gzip, deflate, br) does not decode: zlib's own error, with no status. */
function isUndecodableBody(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return err instanceof Error && typeof code === "string" && (code.startsWith("Z_") || code.startsWith("ERR_BROTLI") || code.startsWith("ERR__ERROR"));
}

/**
 * Turns every failure into the contract's error body. Anything unexpected is
 * logged with the request id and answered with a 500 that reveals nothing.
 */
export function errorHandler(logger: Logger): Middleware {
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) throw new HttpError(404, "Not Found");
    } catch (err) {
      let httpErr: HttpError;
      if (err instanceof HttpError) httpErr = err;
      else if (err instanceof DomainValidationError) httpErr = new HttpError(422, err.issues);
      else if (err instanceof DomainError) {
        const retry = err.retryAfterSeconds;
        httpErr = new HttpError(STATUS[err.kind], err.message, retry === undefined ? {} : { "Retry-After": String(Math.max(1, Math.ceil(retry))) });
      } else if (isBodyParserError(err) && err.status === 413) httpErr = new HttpError(413, "Request body too large");
      else if (isBodyParserError(err) && err.status === 400 && (err instanceof SyntaxError || err.type === "entity.parse.failed")) {
        httpErr = new HttpError(422, [{ loc: ["body"], msg: "JSON decode error", type: "json_invalid" }]);
      } else if (isBodyParserError(err) && err.status === 415) httpErr = new HttpError(415, "Unsupported Media Type");
      else if (isBodyParserError(err) && err.status === 400) httpErr = new HttpError(400, "Malformed request");
      else if (isUndecodableBody(err)) httpErr = new HttpError(400, "The request body could not be decoded (Content-Encoding)");
      else {
        logger.error({ err, request_id: ctx.state.requestId, method: ctx.method, path: ctx.path }, "unhandled error");
        httpErr = new HttpError(500, "Internal Server Error");
      }
      ctx.status = httpErr.status;
      ctx.set(httpErr.headers);
      ctx.body = { detail: httpErr.detail };
    }
  };
}
