import http from "node:http";

// A steady stream of GET requests, as two kinds of client send them: one
// opening a connection per request (a script with curl), one keeping
// connections alive (a service's HTTP client, an ingress controller). Every
// answer but 200, and every connection error or timeout, is a failure, with
// one exception every HTTP client makes for an idempotent request (RFC 9110
// 9.2.2; Go's transport, nginx, undici): when a kept-alive connection is
// closed or reset before any answer (the server closed it as it stopped), the
// request is sent again once, on a new connection. Those retries are counted.

export interface LoadResult {
  sent: number;
  ok: number;
  /** `at`: milliseconds after the load started. */
  failures: { at: number; client: "fresh" | "keep-alive"; error: string }[];
  /** Requests sent again because their kept-alive connection was closed under them. */
  retried: { at: number; error: string }[];
  durationMs: number;
}

export function steadyLoad(url: string, key: string, perSecond: number): { stop(): Promise<LoadResult> } {
  const keepAlive = new http.Agent({ keepAlive: true, maxSockets: 4 });
  const started = Date.now();
  const result: LoadResult = { sent: 0, ok: 0, failures: [], retried: [], durationMs: 0 };
  const pending = new Set<Promise<void>>();
  let n = 0;

  const get = (client: "fresh" | "keep-alive", agent: http.Agent | false) =>
    new Promise<{ ok: true } | { ok: false; error: string; reused: boolean; answered: boolean }>((resolve) => {
      let answered = false;
      const req = http.get(
        url,
        { agent, headers: { authorization: `Bearer ${key}`, ...(client === "fresh" && { connection: "close" }) }, timeout: 5_000 },
        (res) => {
          answered = true;
          res.resume();
          res.on("end", () =>
            resolve(res.statusCode === 200 ? { ok: true } : { ok: false, error: `HTTP ${res.statusCode}`, reused: req.reusedSocket, answered }),
          );
          res.on("error", (err) => resolve({ ok: false, error: `response: ${err.message}`, reused: req.reusedSocket, answered }));
        },
      );
      req.on("timeout", () => req.destroy(new Error("timed out after 5 s")));
      req.on("error", (err: NodeJS.ErrnoException) => resolve({ ok: false, error: err.code ?? err.message, reused: req.reusedSocket, answered }));
    });

  const one = async (client: "fresh" | "keep-alive") => {
    const at = Date.now() - started;
    result.sent++;
    let r = await get(client, client === "fresh" ? false : keepAlive);
    if (!r.ok && client === "keep-alive" && r.reused && !r.answered && /^(ECONNRESET|EPIPE)$/.test(r.error)) {
      result.retried.push({ at, error: r.error });
      r = await get(client, keepAlive);
    }
    if (r.ok) result.ok++;
    else result.failures.push({ at, client, error: r.error });
  };

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
