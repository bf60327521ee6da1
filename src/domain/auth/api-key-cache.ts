import type { Db } from "../../db/database.ts";
import type { ChannelHandlers } from "../../db/notifications.ts";
import { hashApiKey, isWellFormedApiKey } from "./api-key-token.ts";
import { findLiveKey, useKey, type KeyGrant } from "./api-keys.ts";
import type { Principal } from "./scopes.ts";

// Looking the key up cost a database round trip on every request: as much as
// the request's own query for a page of repositories (bench/api.ts). This
// keeps the rows of keys in use in memory, without delaying revocation: a
// trigger on api_keys (migration 0011) NOTIFYs `api_keys_changed` in the
// transaction that revokes, re-scopes, re-dates or deletes any key, whichever
// process or tool does it, and Postgres delivers it to every listener as that
// transaction commits; every process empties its cache then. A cached row is
// used only after a round trip on the listening connection begun after the
// request arrived (shared by the requests waiting at the time, see
// src/db/notifications.ts), so a change committed before the request came is
// always seen first, however late the signal would otherwise have come: that
// round trip is an empty query on a connection of its own, cheaper than the key
// lookup on the pool. Expiry is checked against the clock on every request.
// The cache is used only while the LISTEN is in place (after a lost
// connection nothing is trusted until it is back), and a row fetched while a
// notification arrived is not kept.

export const API_KEY_CHANNEL = "api_keys_changed";
/** Defence in depth: a cached row is read again after this long, notification or not. */
const TTL_MS = 10_000;
/** Bounds memory under many distinct keys; the cache starts over when full. */
const MAX_ENTRIES = 10_000;

interface Entry {
  grant: KeyGrant;
  at: number;
}

export class ApiKeyCache implements ChannelHandlers {
  readonly #db: Db;
  readonly #entries = new Map<string, Entry>();
  /** Bumped by every notification and connection change: a lookup that saw it change keeps nothing. */
  #generation = 0;
  /** The listening connection's barrier; null while it is not in place. */
  #sync: (() => Promise<void>) | null = null;

  constructor(db: Db) {
    this.#db = db;
  }

  onNotify(): void {
    this.#generation++;
    this.#entries.clear();
  }

  onListening(sync: () => Promise<void>): void {
    this.#generation++;
    this.#entries.clear();
    this.#sync = sync;
  }

  onLost(): void {
    this.#sync = null;
    this.#generation++;
    this.#entries.clear();
  }

  /** False when the barrier failed (the connection is lost): the caller reads the row instead. */
  async #synced(): Promise<boolean> {
    const sync = this.#sync;
    if (!sync) return false;
    try {
      await sync();
      return this.#sync === sync;
    } catch {
      return false;
    }
  }

  async authenticate(token: string, now = new Date()): Promise<Principal | null> {
    if (!isWellFormedApiKey(token)) return null;
    const hash = hashApiKey(token);
    const hit = this.#sync ? this.#entries.get(hash) : undefined;
    if (hit && now.getTime() - hit.at < TTL_MS && (await this.#synced())) {
      // Still there after the barrier: no change to any key committed before this request came.
      const still = this.#entries.get(hash);
      if (still) return useKey(this.#db, still.grant, now);
    }
    const generation = this.#generation;
    const grant = await findLiveKey(this.#db, hash);
    if (!grant) return null;
    // Kept only if nothing changed meanwhile: a revocation that committed after this read
    // notified after it, and has bumped the generation by now or will empty the map later.
    if (this.#sync && generation === this.#generation) {
      if (this.#entries.size >= MAX_ENTRIES) this.#entries.clear();
      this.#entries.set(hash, { grant, at: now.getTime() });
    }
    return useKey(this.#db, grant, now);
  }
}
