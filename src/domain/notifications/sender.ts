import http from "node:http";
import https from "node:https";
import { guardedLookup, parseEndpointUrl } from "./endpoint-url.ts";

// One delivery attempt over HTTP: a POST of the body with the signed headers,
// no redirects followed, refused before connecting when the URL or the
// address its name resolves to breaks the endpoint URL policy, given up after
// `timeoutMs` (connecting, sending and the answer together), and at most
// `maxResponseBytes` of the answer read (then the connection is dropped).

export interface SendOptions {
  timeoutMs: number;
  maxResponseBytes: number;
  allowLocal: boolean;
}

export interface AttemptResult {
  /** The answer's status; null when there was none (refused, unreachable, timed out). */
  status: number | null;
  ok: boolean;
  /** Why it failed, for the delivery's record (never the secret or the body sent). */
  error: string | null;
}

const USER_AGENT = "codeplane-webhooks/1";

export function sendAttempt(url: string, headers: Record<string, string>, body: string, o: SendOptions): Promise<AttemptResult> {
  let u: URL;
  try {
    u = parseEndpointUrl(url, o.allowLocal);
  } catch (err) {
    return Promise.resolve({ status: null, ok: false, error: `refused by the endpoint URL policy: ${err instanceof Error ? err.message : String(err)}` });
  }
  const client = u.protocol === "https:" ? https : http;
  return new Promise((resolve) => {
    let settled = false;
    const done = (r: AttemptResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(r);
    };
    const req = client.request(
      u,
      {
        method: "POST",
        agent: false,
        lookup: guardedLookup(o.allowLocal),
        headers: { ...headers, "content-type": "application/json", "content-length": Buffer.byteLength(body), "user-agent": USER_AGENT },
      },
      (res) => {
        const status = res.statusCode ?? 0;
        const ok = status >= 200 && status < 300;
        const chunks: Buffer[] = [];
        let read = 0;
        const finish = () => {
          const excerpt = Buffer.concat(chunks).toString("utf8").replace(/\s+/g, " ").trim().slice(0, 200);
          done({ status, ok, error: ok ? null : `HTTP ${status}${excerpt ? `: ${excerpt}` : ""}` });
          req.destroy();
        };
        res.on("data", (chunk: Buffer) => {
          const room = o.maxResponseBytes - read;
          if (room > 0) chunks.push(chunk.subarray(0, room));
          read += chunk.length;
          if (read >= o.maxResponseBytes) finish();
        });
        res.on("end", finish);
        res.on("error", finish);
      },
    );
    const timer = setTimeout(() => {
      done({ status: null, ok: false, error: `no answer within ${o.timeoutMs} ms` });
      req.destroy();
    }, o.timeoutMs);
    req.on("error", (err: NodeJS.ErrnoException) => {
      const policy = err.code === "EADDRNOTALLOWED" ? "refused by the endpoint URL policy: " : "";
      done({ status: null, ok: false, error: `${policy}${err.message}`.slice(0, 500) });
    });
    req.end(body);
  });
}
