import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type Koa from "koa";
import type { Logger } from "../logger.ts";

export interface HttpServer {
  server: Server;
  port: number;
  /** Stops accepting, lets in-flight requests finish (up to the timeout), then closes what is left. */
  close(): Promise<void>;
}

export async function listen(app: Koa, opts: { host: string; port: number; shutdownTimeoutMs: number; logger: Logger }): Promise<HttpServer> {
  const server = createServer(app.callback());
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
