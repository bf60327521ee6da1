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

export async function listen(app: Koa, opts: { host: string; port: number; shutdownTimeoutMs: number; logger: Logger }): Promise<HttpServer> {
  const handler = app.callback();
  // Node's default (16 KiB) would refuse, with a bare 431, URLs the API accepts: a file path may be
  // 4096 characters, up to 48 KiB percent-encoded.
  const server = createServer({ maxHeaderSize: 64 * 1024 }, handler);
  server.on("connect", answerConnect(handler));
  // Slightly above common load-balancer idle timeouts so they, not we, close idle connections.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port, opts.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  let closing: Promise<void> | null = null;
  return {
    server,
    port,
    close() {
      closing ??= new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          opts.logger.warn("shutdown timeout reached: closing remaining connections");
          server.closeAllConnections();
        }, opts.shutdownTimeoutMs);
        timer.unref();
        server.close(() => {
          clearTimeout(timer);
          resolve();
        });
        server.closeIdleConnections();
      });
      return closing;
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
