import { z } from "zod";

// POSIX-portable names; anything else could not be exported into a process.
const name = z
  .string()
  .min(1)
  .max(255)
  .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "must start with a letter or '_' and contain only letters, digits and '_'");
const value = z.string().max(65_536);

export const createEnvVarSchema = z
  .strictObject({
    name,
    value,
    secret: z.boolean().default(true).meta({ description: "Secret values are never returned. Defaults to true." }),
    repository_id: z.uuid().optional().meta({ description: "Scope to one repository; omit for the whole account." }),
  })
  .meta({ id: "CreateEnvironmentVariable" });
export type CreateEnvVarInput = z.infer<typeof createEnvVarSchema>;

export const updateEnvVarSchema = z
  .strictObject({ name: name.optional(), value: value.optional(), secret: z.boolean().optional() })
  .meta({ id: "UpdateEnvironmentVariable" });
export type UpdateEnvVarInput = z.infer<typeof updateEnvVarSchema>;

export const envVarSchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    value: z.string().nullable().meta({ description: "null for secrets." }),
    secret: z.boolean(),
    repository_id: z.uuid().nullable(),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .meta({ id: "EnvironmentVariable" });
export type EnvVar = z.infer<typeof envVarSchema>;

export const listEnvVarsQuerySchema = z.object({ repository_id: z.uuid().optional() });
