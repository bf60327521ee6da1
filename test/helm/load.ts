import http from "node:http";

// A steady stream of GET requests, as two kinds of client do it: one opening
// a connection per request (a script with curl), one keeping connections
// alive (a service's HTTP client, an ingress controller). Every answer but
// 200, and every connection error or timeout, is a failure.

export interface LoadResult {
  sent: number;
  ok: number;
  /** `at`: milliseconds after the load started. */
  failures: { at: number; client: "fresh" | "keep-alive"; error: string }[];
  durationMs: number;
}

export function steadyLoad(url: string, key: string, perSecond: number): { stop(): Promise<LoadResult> } {
  const keepAlive = new http.Agent({ keepAlive: true, maxSockets: 4 });
  const started = Date.now();
  const result: LoadResult = { sent: 0, ok: 0, failures: [], durationMs: 0 };
  const pending = new Set<Promise<void>>();
  let n = 0;

  const one = (client: "fresh" | "keep-alive") =>
    new Promise<void>((resolve) => {
      const at = Date.now() - started;
      const fail = (error: string) => {
        result.failures.push({ at, client, error });
        resolve();
      };
      const req = http.get(url, { agent: client === "fresh" ? false : keepAlive, headers: { authorization: `Bearer ${key}`, ...(client === "fresh" && { connection: "close" }) }, timeout: 5_000 }, (res) => {
        res.resume();
        res.on("end", () => {
          if (res.statusCode === 200) {
            result.ok++;
            resolve();
          } else fail(`HTTP ${res.statusCode}`);
        });
        res.on("error", (err) => fail(`response: ${err.message}`));
      });
      req.on("timeout", () => req.destroy(new Error("timed out after 5 s")));
      req.on("error", (err: NodeJS.ErrnoException) => fail(err.code ?? err.message));
      result.sent++;
    });

  const timer = setInterval(() => {
    const p = one(n++ % 2 === 0 ? "fresh" : "keep-alive");
    pending.add(p);
    void p.then(() => pending.delete(p));
  }, 1000 / perSecond);

  return {
    async stop() {
      clearInterval(timer);
      await Promise.all(pending);
      keepAlive.destroy();
      result.durationMs = Date.now() - started;
      return result;
    },
  };
}
