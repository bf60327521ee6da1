import { z } from "zod";
import { NOTIFICATION_EVENTS } from "./events.ts";

const eventSchema = z.enum(NOTIFICATION_EVENTS);
const events = z
  .array(eventSchema)
  .min(1)
  .max(NOTIFICATION_EVENTS.length)
  .refine((a) => new Set(a).size === a.length, "must not repeat an event")
  .meta({ description: "The events sent to this endpoint." });
const url = z.string().min(1).max(2048).meta({
  description:
    "Where deliveries are POSTed: an https:// URL whose host resolves only to public addresses (the clone URL policy; checked again at every delivery).",
});

export const createEndpointSchema = z
  .strictObject({ url, events, enabled: z.boolean().default(true).meta({ description: "Defaults to true." }) })
  .meta({ id: "CreateNotificationEndpoint" });
export type CreateEndpointInput = z.infer<typeof createEndpointSchema>;

export const updateEndpointSchema = z
  .strictObject({ url: url.optional(), events: events.optional(), enabled: z.boolean().optional() })
  .meta({ id: "UpdateNotificationEndpoint" });
export type UpdateEndpointInput = z.infer<typeof updateEndpointSchema>;

const endpointFields = {
  id: z.uuid(),
  url: z.string(),
  events: z.array(eventSchema),
  enabled: z.boolean(),
  created_at: z.iso.datetime(),
  updated_at: z.iso.datetime(),
};

export const endpointSchema = z.object(endpointFields).meta({ id: "NotificationEndpoint" });
export type Endpoint = z.infer<typeof endpointSchema>;

export const createdEndpointSchema = z
  .object({
    ...endpointFields,
    secret: z
      .string()
      .regex(/^whsec_[A-Za-z0-9+/]+=*$/)
      .meta({ description: "The signing secret (`whsec_` + base64), shown only in this answer: keep it to verify deliveries." }),
  })
  .meta({ id: "CreatedNotificationEndpoint" });
export type CreatedEndpoint = z.infer<typeof createdEndpointSchema>;

export const deliverySchema = z
  .object({
    id: z.uuid().meta({ description: "Also the `webhook-id` header: the same on every attempt and redelivery, so receivers deduplicate on it." }),
    endpoint_id: z.uuid(),
    event: eventSchema,
    subject: z.object({ kind: z.enum(["run", "analysis"]), id: z.uuid() }),
    status: z.enum(["queued", "sending", "delivered", "failed"]).meta({
      description:
        "`queued` (waiting for its first or next attempt), `sending` (an attempt is in flight), `delivered` (a 2xx answer), `failed` (retries ran out).",
    }),
    attempts: z.int().min(0),
    response_status: z.int().nullable().meta({ description: "The last attempt's HTTP status; null when it had no answer." }),
    error: z.string().nullable().meta({ description: "Why the last attempt failed (HTTP status and the start of the answer, or the connection error)." }),
    next_attempt_at: z.iso.datetime().nullable().meta({ description: "When it is tried next, while `queued`." }),
    last_attempt_at: z.iso.datetime().nullable(),
    delivered_at: z.iso.datetime().nullable(),
    occurred_at: z.iso.datetime().meta({ description: "When the run or analysis reached its status (the body's `timestamp`)." }),
    created_at: z.iso.datetime(),
  })
  .meta({ id: "NotificationDelivery" });
export type Delivery = z.infer<typeof deliverySchema>;
