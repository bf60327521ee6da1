import type Router from "@koa/router";
import type Koa from "koa";
import type { Context } from "koa";
import { z } from "zod";
import type { Db } from "../../db/database.ts";
import { acceptedSchema, deliveryPageSchema } from "../../domain/webhooks/webhooks.schemas.ts";
import { cursorText } from "../../domain/shared/pagination.ts";
import { decodeDeliveryCursor, type WebhookService } from "../../domain/webhooks/webhooks.ts";
import { DELIVERY_ID, EVENT } from "../../domain/webhooks/intake.ts";
import { SIGNATURE } from "../../domain/webhooks/signature.ts";
import { HttpError } from "../http-error.ts";
import { rateLimit, type FailedAuthentications } from "../middleware/rate-limit.ts";
import { readDeclaredBody, type InflightBytes, type WebhookIntakeLimits } from "../webhook-body.ts";
import { errorBodySchema, type Routes } from "../route.ts";

const UNSIGNED = "The X-Hub-Signature-256 signature is missing or does not match the webhook secret";

export interface WebhookIntakeDeps {
  limits: WebhookIntakeLimits;
  /** The process's budget of webhook body bytes. */
  inflight: InflightBytes;
  /** The same per-address budget of failed authentications as /v1: forged signatures spend it. */
  failures: FailedAuthentications;
  /** The per-address rate limit's window (CODEPLANE_RATE_LIMIT_WINDOW_SECONDS). */
  windowSeconds: number;
}

/** Content-Length, once everything else about the request has been checked: 411 without it, 413 over the limit. */
function declaredLength(ctx: Context, limit: number): number {
  const encoding = (ctx.get("Content-Encoding") || "identity").toLowerCase();
  if (encoding !== "identity") throw new HttpError(415, `Content-Encoding ${encoding} is not accepted on webhooks`);
  const header = ctx.get("Content-Length");
  if (!/^\d{1,15}$/.test(header)) throw new HttpError(411, "Webhook deliveries must declare their Content-Length");
  const declared = Number(header);
  if (declared > limit) throw new HttpError(413, `Webhook bodies are limited to ${limit} bytes (CODEPLANE_WEBHOOK_MAX_BODY_BYTES)`);
  return declared;
}

/** What no configuration can make acceptable is refused first, before a byte of the body is read: unsigned, or not a delivery. */
function checkHeaders(ctx: Context, webhooks: WebhookService): void {
  if (!SIGNATURE.test(ctx.get("X-Hub-Signature-256"))) {
    webhooks.countUnsigned(ctx.get("X-GitHub-Event"));
    throw new HttpError(401, UNSIGNED);
  }
  const event = ctx.get("X-GitHub-Event");
  if (!event) throw new HttpError(400, "X-GitHub-Event is missing");
  if (!EVENT.test(event)) throw new HttpError(400, "X-GitHub-Event is not an event name");
  const delivery = ctx.get("X-GitHub-Delivery");
  if (!delivery) throw new HttpError(400, "X-GitHub-Delivery is missing");
  if (!DELIVERY_ID.test(delivery)) throw new HttpError(400, "X-GitHub-Delivery is not a delivery id");
  const type = ctx.request.type;
  if (type && type !== "application/json") throw new HttpError(415, "Webhook deliveries must be JSON: set the App's webhook content type to application/json");
}

/**
 * POST /v1/webhooks/github: the signature is the authentication, so it sits
 * outside the bearer-token middleware (on `router`, mounted before it), and it
 * reads its own raw body, under the limits in ../webhook-body.ts. Documented
 * in `routes`' OpenAPI registry by hand.
 */
export function registerWebhookIntake(router: Router, routes: Routes, db: Db, webhooks: WebhookService, deps: WebhookIntakeDeps): void {
  const { limits, inflight, failures } = deps;
  const perAddress = rateLimit({ requests: limits.rateLimitRequests, windowSeconds: deps.windowSeconds });
  const closeUntilRead: Koa.Middleware = async (ctx, next) => {
    // Any answer given before the whole body is read closes the connection: otherwise Node would read (and discard) the rest of it.
    ctx.set("Connection", "close");
    await next();
  };
  router.post("/v1/webhooks/github", closeUntilRead, perAddress, async (ctx) => {
    checkHeaders(ctx, webhooks);
    const check = webhooks.signatureCheck(ctx.get("X-Hub-Signature-256"));
    if (!check) throw new HttpError(401, UNSIGNED);
    const size = declaredLength(ctx, limits.maxBodyBytes);
    // An address that keeps sending forged signatures is refused before its next body costs anything.
    await failures.refuseIfSpent(ctx);
    if (!inflight.reserve(size))
      throw new HttpError(503, "Too many webhook bytes are being received at once; retry later", {
        "Retry-After": String(Math.max(1, Math.ceil(limits.readTimeoutMs / 1000))),
      });
    try {
      const body = await readDeclaredBody(ctx.req, size, limits.readTimeoutMs, (chunk) => {
        inflight.countRead(chunk.length);
        check.update(chunk);
      });
      ctx.remove("Connection");
      const answer = await webhooks.accept(db, { event: ctx.get("X-GitHub-Event"), deliveryId: ctx.get("X-GitHub-Delivery"), body, signature: check });
      if (answer.status === 401) {
        await failures.record(ctx);
        throw new HttpError(401, UNSIGNED);
      }
      ctx.status = answer.status;
      ctx.body = { id: answer.id, status: answer.queued ? "queued" : "already_accepted" };
    } finally {
      inflight.release(size);
    }
  });

  const err = (description: string) => ({ description, content: { "application/json": { schema: errorBodySchema } } });
  routes.registry.registerPath({
    method: "post",
    path: "/v1/webhooks/github",
    operationId: "receiveGitHubWebhook",
    summary: "Receive a GitHub App webhook delivery",
    description:
      "GitHub's App webhook URL. No bearer token: the `X-Hub-Signature-256` HMAC over the raw body with the webhook secret (or one of `CODEPLANE_GITHUB_WEBHOOK_OLD_SECRETS` during a rotation) is the authentication; " +
      "a missing or forged signature is `401` and nothing is recorded. A verified delivery is recorded in Postgres and answered `202` at once; it is handled afterwards from that durable queue " +
      "(a restart in between loses nothing; several replicas never handle one delivery at the same time). `X-GitHub-Delivery` makes it idempotent: a delivery already accepted is answered `200` " +
      "and not handled again, unless its handling failed, in which case it is queued again (`202`). Handles `push` (branch pushes; deletions and tags are recorded and skipped), `pull_request` " +
      "(`opened`, `synchronize`, `reopened`), `installation` (`created`, `deleted`, `suspend`, `unsuspend`), `installation_repositories` (`added`, `removed`) and `ping`; any other event is recorded and skipped. " +
      "Malformed signature, event or delivery headers, and a missing or too large `Content-Length`, are refused before any of the body is read; the signature is verified as the body arrives. " +
      "Bodies up to `CODEPLANE_WEBHOOK_MAX_BODY_BYTES` (25 MiB, GitHub's own cap), JSON nested up to `CODEPLANE_WEBHOOK_MAX_DEPTH` levels; each client address has `CODEPLANE_WEBHOOK_RATE_LIMIT_REQUESTS` deliveries per window, " +
      "a body must arrive within `CODEPLANE_WEBHOOK_READ_TIMEOUT_SECONDS`, and the process reads at most `CODEPLANE_WEBHOOK_MAX_INFLIGHT_BYTES` of webhook bodies at once.",
    tags: ["Webhooks"],
    // Not the route layer's: no bearer token, rate limit, query check or body reader; the signature is the authentication.
    "x-authentication": "X-Hub-Signature-256",
    request: {
      headers: z.object({
        "X-Hub-Signature-256": z.string().meta({ description: "sha256=<hex HMAC of the body>" }),
        "X-GitHub-Event": z.string(),
        "X-GitHub-Delivery": z.string(),
      }),
      body: { required: true, content: { "application/json": { schema: z.record(z.string(), z.unknown()).meta({ description: "GitHub's event payload." }) } } },
    },
    responses: {
      200: { description: "Already accepted (a redelivery); not handled again.", content: { "application/json": { schema: acceptedSchema } } },
      202: { description: "Accepted and queued.", content: { "application/json": { schema: acceptedSchema } } },
      400: err(
        "Without `X-GitHub-Event` or `X-GitHub-Delivery` (or with malformed ones), a body shorter than its `Content-Length`, or, signed, not JSON or nested deeper than `CODEPLANE_WEBHOOK_MAX_DEPTH`.",
      ),
      401: err("The signature is missing, malformed or does not match (an empty body included)."),
      408: err("The body did not arrive within `CODEPLANE_WEBHOOK_READ_TIMEOUT_SECONDS`; the connection is closed."),
      411: err("No `Content-Length`."),
      413: err("`Content-Length` over `CODEPLANE_WEBHOOK_MAX_BODY_BYTES`."),
      415: err("Not JSON (the App's webhook content type must be application/json), or a Content-Encoding."),
      429: err("Over the client address's deliveries per window, or its failed authentications (forged signatures count); with `Retry-After`."),
      500: err("An unexpected failure; the body reveals nothing, the log has the request id."),
      503: err(
        "No GitHub App is configured on this server (the detail names the missing settings), or `CODEPLANE_WEBHOOK_MAX_INFLIGHT_BYTES` of webhook bodies are being read already (with `Retry-After`).",
      ),
    },
  });
}

const deliveriesQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  cursor: cursorText(400)
    .optional()
    .refine((v) => v === undefined || decodeDeliveryCursor(v) !== null, { message: "Invalid cursor" })
    .meta({ description: "The `next_cursor` of the previous page, unchanged." }),
});

export function registerWebhookRoutes(routes: Routes, db: Db, webhooks: WebhookService): void {
  routes.add({
    method: "get",
    path: "/v1/webhooks/github/deliveries",
    operationId: "listGitHubWebhookDeliveries",
    summary: "Recent GitHub webhook deliveries",
    description:
      "Deliveries about the installations this account has connected, received while they were connected to it, newest first: what each one did, and why it was skipped or failed. " +
      "For an operator finding out why a push was not analysed. Finished deliveries are kept 30 days.",
    tag: "Webhooks",
    scope: "integrations:read",
    query: deliveriesQuery,
    responses: {
      200: { description: "A page of deliveries.", schema: deliveryPageSchema },
      503: { description: "No GitHub App is configured on this server.", schema: errorBodySchema },
    },
    handler: async (_ctx, { query, principal }) => {
      webhooks.requireConfigured();
      return { status: 200, body: await webhooks.list(db, principal.accountId, query) };
    },
  });
}
