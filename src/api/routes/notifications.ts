import { z } from "zod";
import type { Db } from "../../db/database.ts";
import type { NotificationService } from "../../domain/notifications/notifications.ts";
import {
  createdEndpointSchema,
  createEndpointSchema,
  deliverySchema,
  endpointSchema,
  updateEndpointSchema,
} from "../../domain/notifications/notifications.schemas.ts";
import { errorBodySchema, type Routes } from "../route.ts";
import { idParam, pageOf, pageQuery } from "./common.ts";

// Notification endpoints (webhooks) and their deliveries: docs/users/notifications.md.

const TAG = "Notifications";
const endpointParam = idParam("endpoint_id");
const deliveryParams = z.strictObject({ endpoint_id: z.uuid(), delivery_id: z.uuid() });
const notFound = { description: "No such notification endpoint in this account.", schema: errorBodySchema };
const urlRule =
  "The URL must be `https://` and its host must resolve only to public addresses (the clone URL policy: loopback, private, link-local and reserved addresses are refused unless the operator allows local repositories); it is checked again on the resolved address at every delivery. A refused URL is a 422 on `body.url`.";
const dnsUnavailable = { description: "The URL's host could not be resolved for now; try again.", schema: errorBodySchema };

export function registerNotificationRoutes(routes: Routes, db: Db, notifications: NotificationService): void {
  routes.add({
    method: "post",
    path: "/v1/notification-endpoints",
    operationId: "createNotificationEndpoint",
    summary: "Register a notification endpoint",
    description: `Deliveries of the chosen events are POSTed to the URL, signed in the Standard Webhooks form with the secret in this answer, which is never shown again. ${urlRule}`,
    tag: TAG,
    scope: "notifications:write",
    body: createEndpointSchema,
    responses: {
      201: { description: "Registered; `secret` is shown only here.", schema: createdEndpointSchema },
      409: { description: "The account already has as many endpoints as the server allows (CODEPLANE_NOTIFICATIONS_MAX_ENDPOINTS).", schema: errorBodySchema },
      503: dnsUnavailable,
    },
    handler: async (_ctx, { body, principal }) => ({ status: 201, body: await notifications.create(db, principal.accountId, body) }),
  });

  routes.add({
    method: "get",
    path: "/v1/notification-endpoints",
    operationId: "listNotificationEndpoints",
    summary: "List notification endpoints",
    description: "The account's endpoints, newest first; their secrets are never shown again.",
    tag: TAG,
    scope: "notifications:read",
    query: pageQuery,
    responses: { 200: { description: "A page of endpoints, newest first (no secrets).", schema: pageOf(endpointSchema, "NotificationEndpointPage") } },
    handler: async (_ctx, { query, principal }) => ({ status: 200, body: await notifications.list(db, principal.accountId, query) }),
  });

  routes.add({
    method: "get",
    path: "/v1/notification-endpoints/{endpoint_id}",
    operationId: "getNotificationEndpoint",
    summary: "Get a notification endpoint",
    description: "Its URL, events and whether it is enabled (not its secret).",
    tag: TAG,
    scope: "notifications:read",
    params: endpointParam,
    responses: { 200: { description: "The endpoint (its secret is never shown again).", schema: endpointSchema }, 404: notFound },
    handler: async (_ctx, { params, principal }) => ({ status: 200, body: await notifications.get(db, principal.accountId, params.endpoint_id) }),
  });

  routes.add({
    method: "patch",
    path: "/v1/notification-endpoints/{endpoint_id}",
    operationId: "updateNotificationEndpoint",
    summary: "Update a notification endpoint",
    description: `Changes its URL, events or whether it is enabled; events that happen while it is disabled are not queued for it. ${urlRule}`,
    tag: TAG,
    scope: "notifications:write",
    params: endpointParam,
    body: updateEndpointSchema,
    responses: { 200: { description: "Updated.", schema: endpointSchema }, 404: notFound, 503: dnsUnavailable },
    handler: async (_ctx, { params, body, principal }) => ({
      status: 200,
      body: await notifications.update(db, principal.accountId, params.endpoint_id, body),
    }),
  });

  routes.add({
    method: "delete",
    path: "/v1/notification-endpoints/{endpoint_id}",
    operationId: "deleteNotificationEndpoint",
    summary: "Delete a notification endpoint",
    description: "Its deliveries go with it, queued ones unsent.",
    tag: TAG,
    scope: "notifications:write",
    params: endpointParam,
    responses: { 204: { description: "Deleted." }, 404: notFound },
    handler: async (_ctx, { params, principal }) => {
      await notifications.delete(db, principal.accountId, params.endpoint_id);
      return { status: 204 };
    },
  });

  routes.add({
    method: "get",
    path: "/v1/notification-endpoints/{endpoint_id}/deliveries",
    operationId: "listNotificationDeliveries",
    summary: "List an endpoint's deliveries",
    description:
      "Each event queued for the endpoint, newest first, with its status, attempts and the last attempt's answer. Finished deliveries are kept for CODEPLANE_NOTIFICATIONS_RETENTION_DAYS.",
    tag: TAG,
    scope: "notifications:read",
    params: endpointParam,
    query: pageQuery,
    responses: { 200: { description: "A page of deliveries, newest first.", schema: pageOf(deliverySchema, "NotificationDeliveryPage") }, 404: notFound },
    handler: async (_ctx, { params, query, principal }) => ({
      status: 200,
      body: await notifications.deliveries(db, principal.accountId, params.endpoint_id, query),
    }),
  });

  routes.add({
    method: "post",
    path: "/v1/notification-endpoints/{endpoint_id}/deliveries/{delivery_id}/redeliver",
    operationId: "redeliverNotification",
    summary: "Send a delivery again",
    description:
      "Queues a delivered or failed delivery again, to be sent now with the same `webhook-id` and body (receivers that deduplicate on `webhook-id` treat it as the same message), retried like a new one.",
    tag: TAG,
    scope: "notifications:write",
    params: deliveryParams,
    responses: {
      202: { description: "Queued.", schema: deliverySchema },
      404: { description: "No such endpoint in this account, or no such delivery of it.", schema: errorBodySchema },
      409: { description: "The delivery is still queued or being sent.", schema: errorBodySchema },
    },
    handler: async (_ctx, { params, principal }) => ({
      status: 202,
      body: await notifications.redeliver(db, principal.accountId, params.endpoint_id, params.delivery_id),
    }),
  });
}
