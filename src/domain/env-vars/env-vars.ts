import type { Db } from "../../db/database.ts";
import type { EnvVarRow } from "../../db/schema.ts";
import type { SecretBox } from "../crypto/secret-box.ts";
import { conflict, DomainError, DomainValidationError, notFound } from "../errors.ts";
import { isForeignKeyViolation, isUniqueViolation } from "../shared/db-errors.ts";
import { newId } from "../shared/ids.ts";
import { keysetPage } from "../shared/keyset.ts";
import { toPage, type Page, type PageRequest } from "../shared/pagination.ts";
import { iso } from "../shared/time.ts";
import { envVarRowsForRepository } from "./env-var-rows.ts";
import { requireRepository } from "../repositories/repository-rows.ts";
import type { CreateEnvVarInput, EnvVar, UpdateEnvVarInput } from "./env-vars.schemas.ts";

// The associated data ties a ciphertext to its row and account, so copying a
// value's bytes into another row (or account) makes it undecryptable.
const aad = (row: { id: string; account_id: string }) => `env:${row.account_id}:${row.id}`;

const duplicate = (err: unknown) =>
  isUniqueViolation(err)
    ? conflict("An environment variable with this name already exists in this scope")
    : isForeignKeyViolation(err) // the repository was deleted between the check and the insert
      ? notFound("Repository")
      : null;

export class EnvVarService {
  readonly #box: SecretBox;

  constructor(box: SecretBox) {
    this.#box = box;
  }

  #toEnvVar(row: EnvVarRow): EnvVar {
    return {
      id: row.id,
      name: row.name,
      value: row.secret ? null : this.#box.open({ keyId: row.key_id, data: row.value_ciphertext }, aad(row)),
      secret: row.secret,
      repository_id: row.repository_id,
      created_at: iso(row.created_at),
      updated_at: iso(row.updated_at),
    };
  }

  async create(db: Db, accountId: string, input: CreateEnvVarInput): Promise<EnvVar> {
    if (input.repository_id) await requireRepository(db, accountId, input.repository_id);
    const id = newId();
    const sealed = this.#box.seal(input.value, aad({ id, account_id: accountId }));
    const now = new Date();
    try {
      const row = await db
        .insertInto("environment_variables")
        .values({
          id,
          account_id: accountId,
          repository_id: input.repository_id ?? null,
          name: input.name,
          secret: input.secret,
          key_id: sealed.keyId,
          value_ciphertext: sealed.data,
          created_at: now,
          updated_at: now,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      return this.#toEnvVar(row);
    } catch (err) {
      throw duplicate(err) ?? err;
    }
  }

  /**
   * Creates the variable, or updates the one of that name in the same scope
   * (the account, or `repository_id`): what an agent means by "set X". An
   * existing variable keeps its `secret` flag unless `secret` is given.
   */
  async set(db: Db, accountId: string, input: Omit<CreateEnvVarInput, "secret"> & { secret?: boolean }): Promise<{ envVar: EnvVar; created: boolean }> {
    for (let attempt = 0; ; attempt++) {
      if (input.repository_id) await requireRepository(db, accountId, input.repository_id);
      let q = db.selectFrom("environment_variables").select("id").where("account_id", "=", accountId).where("name", "=", input.name);
      q = input.repository_id ? q.where("repository_id", "=", input.repository_id) : q.where("repository_id", "is", null);
      const existing = await q.executeTakeFirst();
      try {
        if (existing) {
          const update = { value: input.value, ...(input.secret !== undefined && { secret: input.secret }) };
          return { envVar: await this.update(db, accountId, existing.id, update), created: false };
        }
        return { envVar: await this.create(db, accountId, { ...input, secret: input.secret ?? true }), created: true };
      } catch (err) {
        // Another request created or deleted it meanwhile: look again, once.
        const raced = err instanceof DomainError && (err.kind === "conflict" || (err.kind === "not_found" && existing !== undefined));
        if (!raced || attempt > 0) throw err;
      }
    }
  }

  async list(db: Db, accountId: string, repositoryId: string | undefined, page: PageRequest): Promise<Page<EnvVar>> {
    if (repositoryId) await requireRepository(db, accountId, repositoryId);
    let q = db.selectFrom("environment_variables").selectAll().where("account_id", "=", accountId);
    if (repositoryId) q = q.where("repository_id", "=", repositoryId);
    return toPage(await keysetPage(q, page).execute(), page.limit, (r) => this.#toEnvVar(r));
  }

  async get(db: Db, accountId: string, id: string): Promise<EnvVar> {
    return this.#toEnvVar(await this.#row(db, accountId, id));
  }

  async update(db: Db, accountId: string, id: string, input: UpdateEnvVarInput): Promise<EnvVar> {
    const current = await this.#row(db, accountId, id);
    // Turning a secret into a plain variable would reveal a value the owner
    // chose to hide; they must send the value again to do that.
    if (current.secret && input.secret === false && input.value === undefined) {
      throw new DomainValidationError([
        { loc: ["body", "value"], msg: "Value error, a secret can only be made non-secret together with a new value", type: "value_error" },
      ]);
    }
    const sealed = input.value !== undefined ? this.#box.seal(input.value, aad(current)) : null;
    try {
      const row = await db
        .updateTable("environment_variables")
        .set({
          ...(input.name !== undefined && { name: input.name }),
          ...(input.secret !== undefined && { secret: input.secret }),
          ...(sealed && { key_id: sealed.keyId, value_ciphertext: sealed.data }),
          updated_at: new Date(),
        })
        .where("id", "=", id)
        .where("account_id", "=", accountId)
        .returningAll()
        .executeTakeFirstOrThrow();
      return this.#toEnvVar(row);
    } catch (err) {
      throw duplicate(err) ?? err;
    }
  }

  async delete(db: Db, accountId: string, id: string): Promise<void> {
    const res = await db.deleteFrom("environment_variables").where("id", "=", id).where("account_id", "=", accountId).executeTakeFirst();
    if (res.numDeletedRows === 0n) throw notFound("Environment variable");
  }

  /**
   * The variables a run of this repository sees, decrypted: account scope,
   * overridden by repository scope. Only the run machinery calls this, to
   * write a per-run Secret.
   */
  async resolveForRepository(db: Db, accountId: string, repositoryId: string): Promise<Record<string, string>> {
    const rows = await envVarRowsForRepository(db, accountId, repositoryId);
    const out: Record<string, string> = {};
    for (const scope of [null, repositoryId]) {
      for (const r of rows.filter((x) => x.repository_id === scope)) {
        out[r.name] = this.#box.open({ keyId: r.key_id, data: r.value_ciphertext }, aad(r));
      }
    }
    return out;
  }

  /** Moves every value not sealed under the current key onto it (after a key rotation). */
  async reencryptAll(db: Db): Promise<number> {
    const current = this.#box.currentKeyId;
    const rows = await db.selectFrom("environment_variables").selectAll().where("key_id", "!=", current).execute();
    for (const r of rows) {
      const sealed = this.#box.seal(this.#box.open({ keyId: r.key_id, data: r.value_ciphertext }, aad(r)), aad(r));
      await db
        .updateTable("environment_variables")
        .set({ key_id: sealed.keyId, value_ciphertext: sealed.data })
        .where("id", "=", r.id)
        .where("key_id", "=", r.key_id)
        .execute();
    }
    return rows.length;
  }

  async #row(db: Db, accountId: string, id: string): Promise<EnvVarRow> {
    const row = await db.selectFrom("environment_variables").selectAll().where("id", "=", id).where("account_id", "=", accountId).executeTakeFirst();
    if (!row) throw notFound("Environment variable");
    return row;
  }
}
