import { z } from "zod";
import { pageQuerySchema } from "../../domain/shared/pagination.ts";

export const pageQuery = pageQuerySchema;

export function pageOf<T extends z.ZodType>(item: T, id: string) {
  return z
    .object({ items: z.array(item), next_cursor: z.string().nullable().meta({ description: "Pass as ?cursor= for the next page; null on the last." }) })
    .meta({ id });
}

export const idParam = <K extends string>(key: K) => z.strictObject({ [key]: z.uuid() } as Record<K, z.ZodUUID>);
