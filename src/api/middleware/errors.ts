import type { Middleware } from "koa";
import { DomainError, DomainValidationError, type ErrorKind } from "../../domain/errors.ts";
import { classifyInfrastructureError } from "../../domain/infrastructure-errors.ts";
import type { Logger } from "../../logger.ts";
import { HttpError } from "../http-error.ts";

const STATUS: Record<ErrorKind, number> = {
  bad_request: 400,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  payload_too_large: 413,
  too_many_requests: 429,
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

function fromDomainError(err: DomainError): HttpError {
  const retry = err.retryAfterSeconds;
  return new HttpError(STATUS[err.kind], err.message, retry === undefined ? {} : { "Retry-After": String(Math.max(1, Math.ceil(retry))) });
}

/** A body parser's or decoder's refusal as the contract answers it; null for anything else. */
function fromBodyError(err: unknown): HttpError | null {
  if (isBodyParserError(err) && err.status === 413) return new HttpError(413, "Request body too large");
  if (isBodyParserError(err) && err.status === 400 && (err instanceof SyntaxError || err.type === "entity.parse.failed")) {
    return new HttpError(422, [{ loc: ["body"], msg: "JSON decode error", type: "json_invalid" }]);
  }
  if (isBodyParserError(err) && err.status === 415) return new HttpError(415, "Unsupported Media Type");
  if (isBodyParserError(err) && err.status === 400) return new HttpError(400, "Malformed request");
  if (isUndecodableBody(err)) return new HttpError(400, "The request body could not be decoded (Content-Encoding)");
  return null;
}

/**
 * Turns every failure into the contract's error body. An infrastructure failure
 * under load (database, Kubernetes, network, resources) is a documented 503
 * with Retry-After or a 409 (domain/infrastructure-errors.ts), logged as a
 * warning with its class. Anything else unexpected is logged with the request
 * id and answered with a 500 that reveals nothing.
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
      else if (err instanceof DomainError) httpErr = fromDomainError(err);
      else {
        const known = fromBodyError(err);
        const infrastructure = known ? null : classifyInfrastructureError(err);
        const where = { err, request_id: ctx.state.requestId as unknown, method: ctx.method, path: ctx.path };
        if (known) httpErr = known;
        else if (infrastructure) {
          logger.warn({ ...where, answer: infrastructure.message }, "infrastructure failure");
          httpErr = fromDomainError(infrastructure);
        } else {
          logger.error(where, "unhandled error");
          httpErr = new HttpError(500, "Internal Server Error");
        }
      }
      ctx.status = httpErr.status;
      ctx.set(httpErr.headers);
      ctx.body = { detail: httpErr.detail };
    }
  };
}
