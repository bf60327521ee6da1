import type Router from "@koa/router";
import type { Context } from "koa";
import type { Db } from "../../db/database.ts";
import { DIAGNOSTICS_MAX_BYTES, parseAgentDiagnostics } from "../../domain/pools/agent-diagnostics.ts";
import { PROGRESS_STEPS, type PoolService, type ProgressStep } from "../../domain/pools/pool-pods.ts";
import { HttpError } from "../http-error.ts";

// The internal door warm-pool pods use (issue 33; docs/developers/warm-pools.md),
// beside the git endpoint, the one address workload pods may reach. A waiting
// pod holds only its pool credential, which opens its own row: it long-polls
// here for its assignment (the run's checkout token, command and variables),
// gets it once, and then reports its start-up steps. Not part of the public API.

/** The longest a pod's poll is held open; it asks again at once after an empty answer. */
export const MAX_WAIT_SECONDS = 25;

const unauthenticated = () => new HttpError(401, "A valid pool credential is required", { "WWW-Authenticate": 'Bearer realm="codeplane pool"' });

/** A progress report's body (the agent's diagnostics, or nothing): "" past max bytes, which then records no diagnostics. */
async function readSmallBody(ctx: Context, max: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > max) return "";
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}

function bearer(ctx: Context): string {
  const m = /^Bearer ([^\s]+)$/i.exec(ctx.get("authorization"));
  if (!m) throw unauthenticated();
  return m[1]!;
}

export function registerPoolRoutes(router: Router, db: Db, pools: PoolService): void {
  router.get("/internal/pool/assignment", async (ctx) => {
    const credential = bearer(ctx);
    const raw = typeof ctx.query.wait === "string" ? Number(ctx.query.wait) : 0;
    const wait = Number.isFinite(raw) ? Math.max(0, Math.min(MAX_WAIT_SECONDS, raw)) : 0;
    const abort = new AbortController();
    ctx.req.once("close", () => abort.abort());
    const r = await pools.take(db, credential, wait * 1000, abort.signal);
    if (!r) throw unauthenticated();
    ctx.set("Cache-Control", "no-store");
    if (r.state === "waiting") {
      ctx.status = 204;
      return;
    }
    // Retired, lost, or its run ended before it asked: this pod will never run anything.
    if (r.state === "gone") throw new HttpError(410, "This pod has no assignment and will get none: it should exit");
    ctx.status = 200;
    ctx.body = r.assignment;
  });

  router.post("/internal/pool/progress/:step", async (ctx) => {
    const credential = bearer(ctx);
    const step = ctx.params.step as ProgressStep;
    if (!PROGRESS_STEPS.includes(step)) throw new HttpError(404, "Unknown step");
    // Diagnostics are the agent's word about its own pod, for operators and the benchmark: a body
    // that is not a well-formed record is ignored rather than failing the step's report.
    const diagnostics = parseAgentDiagnostics(await readSmallBody(ctx, DIAGNOSTICS_MAX_BYTES));
    if (!(await pools.progress(db, credential, step, diagnostics))) throw unauthenticated();
    ctx.status = 204;
  });
}
