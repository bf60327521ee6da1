import { z } from "zod";
import { SCOPES, scopeSchema } from "./scopes.ts";

export const createApiKeySchema = z
  .strictObject({
    // Lengths count what was sent, as the document says; surrounding spaces are then dropped.
    name: z.string().max(100).trim().min(1),
    scopes: z
      .array(scopeSchema)
      .min(1)
      .max(SCOPES.length)
      .refine((s) => new Set(s).size === s.length, "scopes must not repeat")
      .optional()
      .meta({ description: "Omit for a key with every scope the caller has." }),
    expires_at: z.iso.datetime({ offset: true }).optional().meta({ description: "RFC 3339; must be in the future." }),
  })
  .meta({ id: "CreateApiKey" });
export type CreateApiKeyInput = z.infer<typeof createApiKeySchema>;

const apiKeyBase = {
  id: z.uuid(),
  name: z.string(),
  prefix: z.string().meta({ description: "The first characters of the key, to recognise it." }),
  scopes: z.array(scopeSchema),
  created_at: z.iso.datetime(),
  expires_at: z.iso.datetime().nullable(),
};

export const apiKeySchema = z.object({ ...apiKeyBase, last_used_at: z.iso.datetime().nullable() }).meta({ id: "ApiKey" });
export type ApiKey = z.infer<typeof apiKeySchema>;

export const createdApiKeySchema = z
  .object({ ...apiKeyBase, key: z.string().meta({ description: "The secret key. Shown only in this response." }) })
  .meta({ id: "CreatedApiKey" });
export type CreatedApiKey = z.infer<typeof createdApiKeySchema>;
