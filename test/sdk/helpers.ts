// What the SDK tests (TypeScript and Python) set up against the real service:
// rows the controller would write, and a proxy that drops connections.
import { randomUUID } from "node:crypto";
import { createServer, connect, type Server, type Socket } from "node:net";
import type { TestService } from "../helpers/service.ts";

/** A repository row of the account (no mirror behind it: the tests read rows, not git). */
export async function repositoryRow(svc: TestService, accountId: string): Promise<string> {
  const id = randomUUID();
  await svc.db
    .insertInto("repositories")
    .values({
      id,
      account_id: accountId,
      name: `sdk-${id.slice(0, 8)}`,
      url: "https://example.invalid/sdk",
      provider: "git",
      created_at: new Date(),
      updated_at: new Date(),
    })
    .execute();
  return id;
}

/** An ended run whose `lines` lines are archived (every fourth on stderr). */
export async function endedRun(svc: TestService, accountId: string, repositoryId: string, lines: number): Promise<string> {
  const id = randomUUID();
  await svc.db
    .insertInto("runs")
    .values({
      id,
      account_id: accountId,
      repository_id: repositoryId,
      commit_hash: "a".repeat(40),
      workflow_id: `codeplane/run-${id}`,
      status: "completed",
      exit_code: 0,
      logs_complete: true,
      compute_type: "cpu-general",
      run_config: JSON.stringify({ command: ["python3", "train.py"], parameters: {}, timeout_seconds: 60 }),
      updated_at: new Date(),
    })
    .execute();
  await svc.db
    .insertInto("run_log_lines")
    .values(
      Array.from({ length: lines }, (_, i) => ({
        run_id: id,
        seq: i + 1,
        stream: (i + 1) % 4 === 0 ? ("stderr" as const) : ("stdout" as const),
        ts: new Date(),
        line: `line ${i + 1} ${"x".repeat(200)}`,
      })),
    )
    .execute();
  return id;
}

/** A loopback proxy to the service that cuts each of the first `cuts` responses after `bytes` bytes; records each request's head. */
export async function cuttingProxy(target: URL, bytes: number, cuts: number): Promise<{ url: string; heads: string[]; close(): void }> {
  const heads: string[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    sockets.add(client);
    const cut = heads.length < cuts;
    const upstream = connect(Number(target.port), target.hostname);
    sockets.add(upstream);
    let head = "";
    client.on("data", (d) => {
      if (!head.includes("\r\n\r\n")) {
        head += d.toString("latin1");
        if (head.includes("\r\n\r\n")) heads.push(head.slice(0, head.indexOf("\r\n\r\n")));
      }
      upstream.write(d);
    });
    let sent = 0;
    upstream.on("data", (d) => {
      if (cut && sent + d.length >= bytes) {
        client.write(d.subarray(0, Math.max(0, bytes - sent)));
        client.destroy();
        upstream.destroy();
        return;
      }
      sent += d.length;
      client.write(d);
    });
    const end = () => (client.destroy(), upstream.destroy());
    client.on("error", end).on("close", end);
    upstream.on("error", end).on("close", end);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}`,
    heads,
    close: () => {
      for (const s of sockets) s.destroy();
      server.close();
    },
  };
}
