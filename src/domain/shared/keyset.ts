import { sql, type SelectQueryBuilder } from "kysely";
import type { PageRequest } from "./pagination.ts";

/**
 * Newest-first keyset paging on a table whose primary key `id` is a UUIDv7.
 * Fetches one row more than the page so toPage() can tell if another follows.
 */
export function keysetPage<QB extends SelectQueryBuilder<any, any, any>>(qb: QB, page: PageRequest): QB {
  let q = qb.orderBy(sql.ref("id"), "desc").limit(page.limit + 1);
  if (page.cursor) q = q.where(sql.ref("id"), "<", page.cursor);
  return q as QB;
}
