import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join, normalize, sep } from "node:path";
import { promisify } from "node:util";

// A git remote over HTTP on loopback whose repositories can be switched to
// trickle their answers one byte at a time: the slow or hostile code host of
// the fairness tests. It serves git's "dumb" HTTP protocol (static files of a
// bare repository after `git update-server-info`), which git falls back to
// when the first answer is not the smart protocol's; the first request of any
// fetch (info/refs) is what a trickling remote holds up.

const execFileP = promisify(execFile);

export interface SlowGitServer {
  /** http://127.0.0.1:<port>/<mount>/repo.git */
  url(mount: string): string;
  /** Serves `bareRepo` under /<mount>/repo.git (runs update-server-info in it). */
  mount(mount: string, bareRepo: string): Promise<void>;
  /** While on, every answer under /<mount>/ trickles one byte per `intervalMs`. */
  trickle(mount: string, on: boolean): void;
  /** Trickling answers in progress now. */
  readonly trickling: number;
  /** Requests seen, as "<mount> <path>". */
  readonly requests: string[];
  /** Stops the server and cuts every connection (trickling ones too). */
  close(): Promise<void>;
}

export async function startSlowGitServer(opts: { intervalMs?: number } = {}): Promise<SlowGitServer> {
  const interval = opts.intervalMs ?? 500;
  const mounts = new Map<string, string>();
  const slow = new Set<string>();
  const open = new Set<ServerResponse>();
  const timers = new Set<NodeJS.Timeout>();
  const requests: string[] = [];
  let trickling = 0;

  const server = createServer((req, res) => {
    const pathname = new URL(req.url ?? "/", "http://x").pathname;
    const [, mount = "", ...rest] = pathname.split("/");
    const root = mounts.get(mount);
    requests.push(`${mount} /${rest.join("/")}`);
    if (!root || rest[0] !== "repo.git") return void res.writeHead(404).end();
    const file = normalize(join(root, ...rest.slice(1)));
    if (file !== root && !file.startsWith(root + sep)) return void res.writeHead(404).end();
    readFile(file).then(
      (body) => {
        res.writeHead(200, { "content-type": "application/octet-stream", "content-length": body.length });
        if (!slow.has(mount)) return void res.end(body);
        trickling++;
        open.add(res);
        let at = 0;
        let tick: NodeJS.Timeout | undefined = undefined;
        const finish = (end: boolean) => {
          if (!tick || !timers.delete(tick)) return;
          clearInterval(tick);
          open.delete(res);
          trickling--;
          if (end) res.end();
        };
        tick = setInterval(() => {
          if (at >= body.length) return finish(true);
          res.write(body.subarray(at, at + 1));
          at++;
        }, interval);
        timers.add(tick);
        res.on("close", () => finish(false));
      },
      () => res.writeHead(404).end(),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;

  return {
    url: (mount) => `http://127.0.0.1:${port}/${mount}/repo.git`,
    async mount(mount, bareRepo) {
      await execFileP("git", ["update-server-info"], { cwd: bareRepo });
      mounts.set(mount, normalize(bareRepo));
    },
    trickle(mount, on) {
      if (on) slow.add(mount);
      else slow.delete(mount);
    },
    get trickling() {
      return trickling;
    },
    requests,
    async close() {
      for (const t of timers) clearInterval(t);
      timers.clear();
      for (const res of open) res.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
