import { createServer, ServerResponse, type IncomingMessage, type RequestListener, type Server } from "node:http";
import type { Duplex } from "node:stream";
import type { AddressInfo, Socket } from "node:net";
import type Koa from "koa";
import type { Logger } from "../logger.ts";

export interface HttpServer {
  server: Server;
  port: number;
  /** Stops accepting, lets in-flight requests finish (up to the timeout), then closes what is left. */
  close(): Promise<void>;
}

/** While shutting down, idle kept-alive connections are closed this often (those that were busy become idle). */
const IDLE_SWEEP_MS = 250;

/** How long a request may take to arrive whole (headers and body), as Node's own default requestTimeout. */
export const REQUEST_TIMEOUT_MS = 300_000;

export interface ListenOptions {
  host: string;
  port: number;
  shutdownTimeoutMs: number;
  logger: Logger;
  /**
   * How long this request may take to arrive whole; REQUEST_TIMEOUT_MS when not given. Node's
   * requestTimeout is one figure for the whole server, so it is off and this bound is kept per
   * request instead: a door that takes large bodies (an environment archive) gets its own.
   */
  requestTimeoutMs?: (req: IncomingMessage) => number;
}

/**
 * False for a request with neither Content-Length nor Transfer-Encoding: it has no body (RFC 9112
 * 6.3), so it arrived whole with its headers, and a timer (with its two listeners) would only be set
 * and cleared (most requests: every GET).
 */
const mayHaveBody = (req: IncomingMessage) => req.headers["content-length"] !== undefined || req.headers["transfer-encoding"] !== undefined;

/**
 * Answers 408 and closes the connection if the request has not arrived whole within ms, as Node's
 * requestTimeout does (its answer, when nothing was answered yet). Cleared once the body is in.
 */
export function boundRequestTime(req: IncomingMessage, res: ServerResponse, ms: number): void {
  if (req.complete || !mayHaveBody(req)) return;
  const timer = setTimeout(() => {
    if (req.complete) return;
    const socket = req.socket;
    if (!res.headersSent && socket.writable) socket.write("HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n");
    socket.destroy();
  }, ms);
  timer.unref();
  const clear = () => clearTimeout(timer);
  req.once("end", clear);
  req.once("close", clear);
}

export async function listen(app: Koa, opts: ListenOptions): Promise<HttpServer> {
  const appHandler = app.callback();
  const requestTimeoutMs = opts.requestTimeoutMs ?? (() => REQUEST_TIMEOUT_MS);
  let closing = false;
  function forget(this: ServerResponse) {
    pending.delete(this);
  }
  // Unfinished responses: those not yet begun are told to close their connection once shutdown
  // starts, and all of them are named if the shutdown timeout is reached.
  const pending = new Set<ServerResponse>();
  // Once closing, every answer says "Connection: close", so a kept-alive client moves on instead of
  // sending its next request down a connection that is about to go.
  const handler: RequestListener = (req, res) => {
    if (mayHaveBody(req)) boundRequestTime(req, res, requestTimeoutMs(req));
    if (closing) res.shouldKeepAlive = false;
    else {
      pending.add(res);
      // A response emits "close" once finished as well as when its connection is cut; one listener
      // shared by every response, not two closures made for each.
      res.on("close", forget);
    }
    void appHandler(req, res);
  };
  // Node's default (16 KiB) would refuse, with a bare 431, URLs the API accepts: a file path may be
  // 4096 characters, up to 48 KiB percent-encoded.
  const server = createServer({ maxHeaderSize: 64 * 1024 }, handler);
  server.on("connect", answerConnect(handler));
  // Slightly above common load-balancer idle timeouts so they, not we, close idle connections.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  // Kept per request by boundRequestTime (headersTimeout still bounds the headers).
  server.requestTimeout = 0;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port, opts.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  let shutdown: Promise<void> | null = null;
  return {
    server,
    port,
    close() {
      shutdown ??= new Promise<void>((resolve) => {
        closing = true;
        for (const res of pending) if (!res.headersSent) res.shouldKeepAlive = false;
        const timer = setTimeout(() => {
          // What held the shutdown up: each unfinished request's method and path (never its query).
          const open = [...pending].map((res) => ({ method: res.req.method, path: res.req.url?.split("?")[0], streaming: res.headersSent }));
          opts.logger.warn({ open }, "shutdown timeout reached: closing remaining connections");
          server.closeAllConnections();
        }, opts.shutdownTimeoutMs);
        timer.unref();
        // A connection busy with a keep-alive answer becomes idle when it is done: close those as they come.
        const sweep = setInterval(() => server.closeIdleConnections(), IDLE_SWEEP_MS);
        sweep.unref();
        server.close(() => {
          clearTimeout(timer);
          clearInterval(sweep);
          resolve();
        });
        server.closeIdleConnections();
      });
      return shutdown;
    },
  };
}

/**
 * Node hands a CONNECT request to a "connect" listener instead of the request
 * handler (and drops the connection when there is none). This API tunnels
 * nothing: the app answers it like any other request (a known path: 405 with
 * Allow; any other target: 404), and the connection closes after the answer.
 */
function answerConnect(handler: RequestListener): (req: IncomingMessage, socket: Duplex) => void {
  return (req, socket) => {
    socket.on("error", () => socket.destroy());
    // `CONNECT host:port` (what a proxy is asked) names no path of this API: answered as the
    // asterisk-form target, which no route serves, so 404.
    if (!req.url?.startsWith("/")) req.url = "*";
    const res = new ServerResponse(req);
    res.shouldKeepAlive = false;
    res.assignSocket(socket as Socket);
    res.on("finish", () => {
      res.detachSocket(socket as Socket);
      socket.end();
    });
    void handler(req, res);
  };
}
