import { z } from "zod";
import type { Db } from "../../db/database.ts";
import { conflict, notFound } from "../errors.ts";
import { isUniqueViolation } from "../shared/db-errors.ts";
import { newId } from "../shared/ids.ts";
import { iso } from "../shared/time.ts";

export const accountNameSchema = z
  .string()
  .regex(/^[a-z0-9][a-z0-9._-]{0,62}$/, "must be 1-63 lower-case letters, digits, '.', '_' or '-', starting with a letter or digit");

export interface Account {
  id: string;
  name: string;
  created_at: string;
}

export async function createAccount(db: Db, name: string): Promise<Account> {
  const parsed = accountNameSchema.parse(name);
  try {
    const row = await db.insertInto("accounts").values({ id: newId(), name: parsed }).returningAll().executeTakeFirstOrThrow();
    return { id: row.id, name: row.name, created_at: iso(row.created_at) };
  } catch (err) {
    if (isUniqueViolation(err)) throw conflict(`Account '${parsed}' already exists`);
    throw err;
  }
}

export async function getAccountByName(db: Db, name: string): Promise<Account> {
  const row = await db.selectFrom("accounts").selectAll().where("name", "=", name).executeTakeFirst();
  if (!row) throw notFound(`Account '${name}'`);
  return { id: row.id, name: row.name, created_at: iso(row.created_at) };
}
