import type Router from "@koa/router";
import type { Context } from "koa";
import { z } from "zod";
import type { Db } from "../../db/database.ts";
import { acceptedSchema, deliveryPageSchema } from "../../domain/webhooks/webhooks.schemas.ts";
import { cursorText } from "../../domain/shared/pagination.ts";
import { decodeDeliveryCursor, type WebhookService } from "../../domain/webhooks/webhooks.ts";
import { HttpError } from "../http-error.ts";
import { errorBodySchema, type Routes } from "../route.ts";

const UNSIGNED = "The X-Hub-Signature-256 signature is missing or does not match the webhook secret";

/** GitHub sends up to 25 MB; this route alone reads that much (the rest of the API keeps its own limit). */
export const WEBHOOK_BODY_LIMIT = 25 * 1024 * 1024;

/** The raw bytes GitHub signed: read as they came, with the limit enforced while reading. */
async function rawBody(ctx: Context, limit: number): Promise<Buffer> {
  const encoding = (ctx.get("Content-Encoding") || "identity").toLowerCase();
  if (encoding !== "identity") throw new HttpError(415, `Content-Encoding ${encoding} is not accepted on webhooks`);
  const declared = Number(ctx.get("Content-Length") || "0");
  if (declared > limit) throw new HttpError(413, `Webhook bodies are limited to ${limit} bytes`);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) {
      ctx.req.destroy();
      throw new HttpError(413, `Webhook bodies are limited to ${limit} bytes`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/**
 * POST /v1/webhooks/github: the signature is the authentication, so it sits
 * outside the bearer-token middleware (on `router`, mounted before it), and it
 * reads its own raw body. Documented in `routes`' OpenAPI registry by hand.
 */
export function registerWebhookIntake(router: Router, routes: Routes, db: Db, webhooks: WebhookService): void {
  router.post("/v1/webhooks/github", async (ctx) => {
    // What no configuration can make acceptable is refused first: unsigned, or not a delivery.
    if (!ctx.get("X-Hub-Signature-256")) throw new HttpError(401, UNSIGNED);
    for (const header of ["X-GitHub-Event", "X-GitHub-Delivery"]) if (!ctx.get(header)) throw new HttpError(400, `${header} is missing`);
    webhooks.requireConfigured();
    const type = ctx.request.type;
    if (type && type !== "application/json")
      throw new HttpError(415, "Webhook deliveries must be JSON: set the App's webhook content type to application/json");
    const body = await rawBody(ctx, WEBHOOK_BODY_LIMIT);
    const answer = await webhooks.accept(db, {
      signature: ctx.get("X-Hub-Signature-256") || undefined,
      event: ctx.get("X-GitHub-Event") || undefined,
      deliveryId: ctx.get("X-GitHub-Delivery") || undefined,
      body,
    });
    if (answer.status === 401) throw new HttpError(401, UNSIGNED);
    ctx.status = answer.status;
    ctx.body = { id: answer.id, status: answer.queued ? "queued" : "already_accepted" };
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
      "Bodies up to 25 MB.",
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
      400: err("Without `X-GitHub-Event` or `X-GitHub-Delivery` (or with malformed ones), or, signed, not JSON."),
      401: err("The signature is missing or does not match."),
      413: err("Body over 25 MB."),
      415: err("Not JSON (the App's webhook content type must be application/json), or a Content-Encoding."),
      500: err("An unexpected failure; the body reveals nothing, the log has the request id."),
      503: err("No GitHub App is configured on this server; the detail names the missing settings."),
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
