import { mkdtempSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { main } from "./main.ts";

// `cpl logs -f` over a real socket to a stand-in for the run log stream: the
// connection drops mid-run, cpl reconnects with Last-Event-ID, nothing is lost
// or repeated, stdout and stderr stay apart, and it exits with the run's code.

const RUN = "01900000-0000-7000-8000-000000000001";
const servers: ReturnType<typeof createServer>[] = [];
afterEach(() => servers.splice(0).forEach((s) => s.close()));

async function serve(handler: (req: IncomingMessage, res: ServerResponse, n: number) => void): Promise<string> {
  let n = 0;
  const server = createServer((req, res) => handler(req, res, ++n));
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const ev = (event: string, id: string | null, data: unknown) => `event: ${event}\n${id === null ? "" : `id: ${id}\n`}data: ${JSON.stringify(data)}\n\n`;

function io(url: string) {
  const o = {
    out: "",
    err: "",
    env: { CPL_URL: url, CPL_API_KEY: "cp_test", CPL_CONFIG_DIR: mkdtempSync(path.join(tmpdir(), "cpl-follow-")) },
    stdout: { write: (s: string | Uint8Array) => void (o.out += String(s)) },
    stderr: { write: (s: string | Uint8Array) => void (o.err += String(s)) },
    readStdin: async () => "",
  };
  return o;
}

describe("logs -f", () => {
  it("resumes after a dropped connection from the last event id, and exits with the run's exit code", async () => {
    const seen: { lastEventId: string | undefined; auth: string | undefined; path: string | undefined }[] = [];
    const url = await serve((req, res, n) => {
      seen.push({ lastEventId: req.headers["last-event-id"] as string | undefined, auth: req.headers.authorization, path: req.url });
      if (n !== 2) res.writeHead(200, { "content-type": "text/event-stream" });
      if (n === 1) {
        res.write("retry: 20\n\n" + ev("status", "0:running", { status: "running" }) + ev("timeline", null, { timeline: [] }));
        res.write(ev("stdout", "1", { seq: 1, line: "\x1b[32mgreen\x1b[0m" }) + ev("stderr", "2", { seq: 2, line: "warn" }));
        // Half an event, then the connection drops.
        res.write('event: stdout\nid: 3\ndata: {"seq":3,"li');
        setTimeout(() => res.socket?.destroy(), 20);
      } else if (n === 2) {
        // A 503 while the server restarts: tried again.
        res.writeHead(503, { "content-type": "application/json" });
        res.end(JSON.stringify({ detail: "restarting" }));
      } else {
        res.end(
          ev("stdout", "3", { seq: 3, line: "after" }) + ev("status", "3:failed", { status: "failed" }) + ev("end", null, { status: "failed", exit_code: 7 }),
        );
      }
    });
    const out = io(url);
    expect(await main(["logs", RUN, "-f"], out)).toBe(7);
    expect(out.out).toBe("\x1b[32mgreen\x1b[0m\nafter\n");
    expect(out.err).toMatch(/^warn\ncpl: .*resuming after 2 \(attempt 1\)\ncpl: .*503 restarting; resuming after 2 \(attempt 2\)\n$/);
    expect(seen).toEqual([
      { lastEventId: undefined, auth: "Bearer cp_test", path: `/v1/runs/${RUN}/logs/stream` },
      { lastEventId: "2", auth: "Bearer cp_test", path: `/v1/runs/${RUN}/logs/stream` },
      { lastEventId: "2", auth: "Bearer cp_test", path: `/v1/runs/${RUN}/logs/stream` },
    ]);
  });

  it("-o json: one object per event on stdout (timelines left out); a run cancelled without an exit code exits 125", async () => {
    const url = await serve((req, res) => {
      if (req.url?.endsWith("/logs/stream")) {
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.end(ev("stdout", "1", { seq: 1, line: "x" }) + ev("timeline", null, { timeline: [] }) + ev("end", null, { status: "cancelled", exit_code: null }));
      } else {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ run_id: RUN, status: "cancelled", error: "cancelled by the user" }));
      }
    });
    const out = io(url);
    expect(await main(["logs", RUN, "-f", "-o", "json"], out)).toBe(125);
    expect(
      out.out
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as unknown),
    ).toEqual([
      { event: "stdout", id: "1", data: { seq: 1, line: "x" } },
      { event: "end", id: null, data: { status: "cancelled", exit_code: null } },
    ]);
    expect(out.err).toBe(`cpl: run ${RUN} cancelled: cancelled by the user\n`);
  });

  it("a 404 is not retried: exit 4 with the API's detail", async () => {
    const url = await serve((_req, res) => {
      res.writeHead(404, { "content-type": "application/json" });
      res.end(JSON.stringify({ detail: "Run not found" }));
    });
    const out = io(url);
    expect(await main(["logs", RUN, "-f"], out)).toBe(4);
    expect(out.err).toBe(`cpl: GET /v1/runs/${RUN}/logs/stream: 404 Run not found\n`);
  });
});
