// A process of SSE subscribers for bench/sse-fanout.ts: opens SUBSCRIBERS
// plain HTTP connections to one run's log stream, parses the events itself
// (no EventSource: the point is the server's cost, not a client library's),
// and measures each line's delivery latency from the timestamp its source
// wrote into the line to its receipt here. Prints one JSON line at the end.
import http from "node:http";

const url = new URL(process.env.STREAM_URL!);
const key = process.env.API_KEY!;
const count = Number(process.env.SUBSCRIBERS);
const expected = Number(process.env.EXPECTED_LINES);

interface Client {
  lines: number;
  lastSeq: number;
  outOfOrder: number;
  ended: boolean;
}

/** Delivery latency in whole milliseconds -> how many lines took that long (a million lines fit in a small object). */
const latencies: Record<number, number> = {};
const clients: Client[] = [];
let connected = 0;

function open(): Promise<void> {
  return new Promise((resolve, reject) => {
    const c: Client = { lines: 0, lastSeq: 0, outOfOrder: 0, ended: false };
    clients.push(c);
    const req = http.get(url, { headers: { authorization: `Bearer ${key}`, accept: "text/event-stream" }, agent: false }, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`stream answered ${res.statusCode}`));
      connected++;
      resolve();
      res.setEncoding("utf8");
      let buf = "";
      res.on("data", (chunk: string) => {
        const now = Date.now();
        buf += chunk;
        // One pass over what arrived; the unfinished tail is kept for the next chunk.
        let from = 0;
        let at: number;
        while ((at = buf.indexOf("\n\n", from)) >= 0) {
          if (buf.startsWith("event: std", from)) {
            const data = buf.indexOf("data: ", from) + 6;
            // {"seq":N,"ts":"...","line":"<ms> line <n>"}: the numbers are read without parsing the JSON.
            const seq = Number(buf.slice(data + 7, buf.indexOf(",", data)));
            const lineAt = buf.indexOf('"line":"', data) + 8;
            const sent = Number(buf.slice(lineAt, buf.indexOf(" ", lineAt)));
            if (Number.isFinite(sent)) latencies[now - sent] = (latencies[now - sent] ?? 0) + 1;
            if (seq <= c.lastSeq) c.outOfOrder++;
            c.lastSeq = seq;
            c.lines++;
          } else if (buf.startsWith("event: end", from)) {
            c.ended = true;
            res.destroy();
          }
          from = at + 2;
        }
        buf = buf.slice(from);
      });
      res.on("close", () => {
        c.ended = true;
        if (clients.every((x) => x.ended)) done();
      });
    });
    req.on("error", reject);
  });
}

function done(): void {
  const result = JSON.stringify({
    connected,
    complete: clients.filter((c) => c.lines === expected).length,
    outOfOrder: clients.reduce((n, c) => n + c.outOfOrder, 0),
    latencies,
  });
  // Exit once the pipe has taken it all (a pipe write is asynchronous).
  process.stdout.write(result + "\n", () => process.exit(0));
}

// Connections opened a few at a time, as clients arriving would.
for (let i = 0; i < count; i += 25) await Promise.all(Array.from({ length: Math.min(25, count - i) }, () => open()));
process.stdout.write(`connected ${connected}\n`);
