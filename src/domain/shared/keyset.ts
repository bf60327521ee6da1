import { sql, type SelectQueryBuilder } from "kysely";
import type { PageRequest } from "./pagination.ts";

/**
 * Newest-first keyset paging on a table whose primary key (`id` unless named) is a UUIDv7.
 * Fetches one row more than the page so toPage() can tell if another follows.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any query over any table: only orderBy and limit are used
export function keysetPage<QB extends SelectQueryBuilder<any, any, any>>(qb: QB, page: PageRequest, key = "id"): QB {
  let q = qb.orderBy(sql.ref(key), "desc").limit(page.limit + 1);
  if (page.cursor) q = q.where(sql.ref(key), "<", page.cursor);
  return q as QB;
}
