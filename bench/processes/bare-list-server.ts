// The reference server for bench/api.ts: node:http and pg alone, answering a
// page of repositories as GET /v1/repositories does (the same query, the same
// fields, a bearer token required) but with nothing else: no framework,
// middleware, key check, logging or metrics. It shows what any HTTP service in
// Node gets on this machine against the raw query, so the ratio between the
// API and this is codeplane's own cost. Listens on PORT; DATABASE_URL,
// ACCOUNT_ID and POOL_MAX say what to read.
import http from "node:http";
import pg from "pg";

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.POOL_MAX ?? 10) });
const account = process.env.ACCOUNT_ID!;
const QUERY = "select * from repositories where account_id = $1 order by id desc limit 21";

interface Row {
  id: string;
  name: string;
  url: string;
  provider: string;
  default_branch: string;
  integration_id: string | null;
  auto_analyze: boolean;
  created_at: Date;
  updated_at: Date;
}

const server = http.createServer((req, res) => {
  if (!req.headers.authorization?.startsWith("Bearer ")) {
    res.writeHead(401).end();
    return;
  }
  pool.query<Row>(QUERY, [account]).then(
    ({ rows }) => {
      const items = rows.slice(0, 20).map((r) => ({
        id: r.id,
        name: r.name,
        url: r.url,
        provider: r.provider,
        default_branch: r.default_branch,
        integration_id: r.integration_id,
        auto_analyze: r.auto_analyze,
        created_at: r.created_at.toISOString(),
        updated_at: r.updated_at.toISOString(),
      }));
      const body = JSON.stringify({ items, next_cursor: rows.length > 20 ? items[19]!.id : null });
      res.writeHead(200, { "content-type": "application/json; charset=utf-8", "content-length": Buffer.byteLength(body) }).end(body);
    },
    (err: Error) => {
      res.writeHead(500, { "content-type": "application/json" }).end(JSON.stringify({ detail: err.message }));
    },
  );
});
server.listen(Number(process.env.PORT), "127.0.0.1", () => process.send?.("listening"));
process.on("SIGTERM", () => {
  server.close();
  void pool.end();
});
