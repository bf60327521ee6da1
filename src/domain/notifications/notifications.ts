import type { Db } from "../../db/database.ts";
import type { SecretBox } from "../crypto/secret-box.ts";
import { conflict, notFound } from "../errors.ts";
import { newId } from "../shared/ids.ts";
import { toPage, type Page, type PageRequest } from "../shared/pagination.ts";
import { iso, isoOrNull } from "../shared/time.ts";
import type { HostLookup } from "../repositories/clone-url-policy.ts";
import { checkEndpointUrl } from "./endpoint-url.ts";
import type { NotificationEvent } from "./events.ts";
import {
  countEndpoints,
  findDelivery,
  findEndpoint,
  listDeliveryRows,
  listEndpointRows,
  requeueDelivery,
  type EndpointRow,
  type NotificationDeliveryRow,
} from "./notification-rows.ts";
import type { CreatedEndpoint, CreateEndpointInput, Delivery, Endpoint, UpdateEndpointInput } from "./notifications.schemas.ts";
import { newSecret } from "./signing.ts";

// An account's webhook endpoints and their deliveries (docs/users/notifications.md).
// The signing secret is generated here, sealed at rest like environment
// variables (bound to the endpoint's row and account) and shown once.

/** The associated data binding a sealed secret to its endpoint and account. */
export const endpointAad = (row: { id: string; account_id: string }) => `notification-endpoint:${row.account_id}:${row.id}`;

export interface NotificationServiceOptions {
  box: SecretBox;
  /** CODEPLANE_ALLOW_LOCAL_REPOSITORIES: http:// and local addresses allowed (development and tests). */
  allowLocal: boolean;
  maxEndpointsPerAccount: number;
  lookup?: HostLookup;
  /** Wakes the delivery workers of this process (a redelivery is due now). */
  wake?(): void;
}

function toEndpoint(r: EndpointRow): Endpoint {
  return {
    id: r.id,
    url: r.url,
    events: r.events as NotificationEvent[],
    enabled: r.enabled,
    created_at: iso(r.created_at),
    updated_at: iso(r.updated_at),
  };
}

export function toDelivery(r: NotificationDeliveryRow): Delivery {
  return {
    id: r.id,
    endpoint_id: r.endpoint_id,
    event: r.event as NotificationEvent,
    subject: { kind: r.subject_kind, id: r.subject_id },
    status: r.status,
    attempts: r.attempts,
    response_status: r.response_status,
    error: r.last_error,
    next_attempt_at: r.status === "queued" ? iso(r.available_at) : null,
    last_attempt_at: isoOrNull(r.last_attempt_at),
    delivered_at: isoOrNull(r.delivered_at),
    occurred_at: iso(r.occurred_at),
    created_at: iso(r.created_at),
  };
}

export class NotificationService {
  readonly #o: NotificationServiceOptions;

  constructor(o: NotificationServiceOptions) {
    this.#o = o;
  }

  async create(db: Db, accountId: string, input: CreateEndpointInput): Promise<CreatedEndpoint> {
    const url = await checkEndpointUrl(input.url, this.#o);
    const max = this.#o.maxEndpointsPerAccount;
    const id = newId();
    const secret = newSecret();
    const sealed = this.#o.box.seal(secret, endpointAad({ id, account_id: accountId }));
    const row = await db.transaction().execute(async (trx) => {
      // One count at a time per account: the account row's lock orders concurrent creations.
      await trx.selectFrom("accounts").select("id").where("id", "=", accountId).forUpdate().executeTakeFirst();
      if ((await countEndpoints(trx, accountId)) >= max) {
        throw conflict(`This account already has ${max} notification endpoints (CODEPLANE_NOTIFICATIONS_MAX_ENDPOINTS); delete one first`);
      }
      const now = new Date();
      return trx
        .insertInto("notification_endpoints")
        .values({
          id,
          account_id: accountId,
          url,
          events: input.events,
          enabled: input.enabled,
          key_id: sealed.keyId,
          secret_ciphertext: sealed.data,
          created_at: now,
          updated_at: now,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
    });
    return { ...toEndpoint(row), secret };
  }

  async list(db: Db, accountId: string, page: PageRequest): Promise<Page<Endpoint>> {
    return toPage(await listEndpointRows(db, accountId, page), page.limit, toEndpoint);
  }

  async get(db: Db, accountId: string, id: string): Promise<Endpoint> {
    return toEndpoint(await this.#row(db, accountId, id));
  }

  async update(db: Db, accountId: string, id: string, input: UpdateEndpointInput): Promise<Endpoint> {
    await this.#row(db, accountId, id);
    const url = input.url !== undefined ? await checkEndpointUrl(input.url, this.#o) : undefined;
    const row = await db
      .updateTable("notification_endpoints")
      .set({
        ...(url !== undefined && { url }),
        ...(input.events !== undefined && { events: input.events }),
        ...(input.enabled !== undefined && { enabled: input.enabled }),
        updated_at: new Date(),
      })
      .where("id", "=", id)
      .where("account_id", "=", accountId)
      .returningAll()
      .executeTakeFirst();
    if (!row) throw notFound("Notification endpoint");
    return toEndpoint(row);
  }

  /** Removes the endpoint and, with it, its deliveries (queued ones are not sent). */
  async delete(db: Db, accountId: string, id: string): Promise<void> {
    const r = await db.deleteFrom("notification_endpoints").where("id", "=", id).where("account_id", "=", accountId).executeTakeFirst();
    if (r.numDeletedRows === 0n) throw notFound("Notification endpoint");
  }

  async deliveries(db: Db, accountId: string, endpointId: string, page: PageRequest): Promise<Page<Delivery>> {
    await this.#row(db, accountId, endpointId);
    return toPage(await listDeliveryRows(db, accountId, endpointId, page), page.limit, toDelivery);
  }

  /** Sends a delivered or failed delivery again (same webhook-id and body), with a fresh retry window. */
  async redeliver(db: Db, accountId: string, endpointId: string, deliveryId: string): Promise<Delivery> {
    await this.#row(db, accountId, endpointId);
    const row = await requeueDelivery(db, accountId, endpointId, deliveryId);
    if (!row) {
      const current = await findDelivery(db, accountId, endpointId, deliveryId);
      if (!current) throw notFound("Delivery");
      throw conflict(`The delivery is ${current.status}: it is already going to be sent`);
    }
    this.#o.wake?.();
    return toDelivery(row);
  }

  /** Every endpoint secret sealed under an older key, sealed again under the current one (codeplane secrets reencrypt). */
  async reencryptAll(db: Db): Promise<number> {
    const box = this.#o.box;
    const rows = await db.selectFrom("notification_endpoints").selectAll().where("key_id", "!=", box.currentKeyId).execute();
    for (const r of rows) {
      const sealed = box.seal(box.open({ keyId: r.key_id, data: r.secret_ciphertext }, endpointAad(r)), endpointAad(r));
      await db
        .updateTable("notification_endpoints")
        .set({ key_id: sealed.keyId, secret_ciphertext: sealed.data })
        .where("id", "=", r.id)
        .where("key_id", "=", r.key_id)
        .execute();
    }
    return rows.length;
  }

  async #row(db: Db, accountId: string, id: string): Promise<EndpointRow> {
    const row = await findEndpoint(db, accountId, id);
    if (!row) throw notFound("Notification endpoint");
    return row;
  }
}
