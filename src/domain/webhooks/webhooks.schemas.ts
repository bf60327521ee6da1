import { z } from "zod";

export const deliverySchema = z
  .object({
    id: z.string().meta({ description: "GitHub's delivery id (X-GitHub-Delivery): the same in the App's Advanced settings, where it can be redelivered." }),
    event: z.string(),
    action: z.string().nullable(),
    installation_id: z.number().int().nullable(),
    repository: z.string().nullable().meta({ description: "owner/name, when the delivery is about a repository." }),
    status: z.enum(["queued", "processing", "handled", "skipped", "failed"]).meta({
      description:
        "queued: accepted, waiting (or waiting to be tried again: see error); processing: being handled; handled: done; skipped: nothing to do, with the reason in error; failed: handling failed after its attempts (a redelivery from GitHub tries again).",
    }),
    error: z.string().nullable().meta({ description: "Why it was skipped, or why handling failed (the last attempt)." }),
    attempts: z.number().int(),
    received_at: z.iso.datetime(),
    finished_at: z.iso.datetime().nullable(),
  })
  .meta({ id: "WebhookDelivery" });
export type Delivery = z.infer<typeof deliverySchema>;

export const deliveryPageSchema = z.object({ items: z.array(deliverySchema), next_cursor: z.string().nullable() }).meta({ id: "WebhookDeliveryPage" });

export const acceptedSchema = z
  .object({
    id: z.string(),
    status: z.enum(["queued", "already_accepted"]),
  })
  .meta({ id: "WebhookAccepted" });
