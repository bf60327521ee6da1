import type { Db } from "../../db/database.ts";
import type { GitRepository } from "../repositories/git-port.ts";
import type { UploadPackOptions } from "../repositories/git/checkout-server.ts";
import { findRepository } from "../repositories/repository-rows.ts";
import { notFound } from "../errors.ts";
import { checkoutGrantFor, type CheckoutGrant } from "./checkout-tokens.ts";

// The git endpoint's rules: a token opens exactly one commit of exactly one
// repository, for as long as its workload may run. Everything else looks
// like nothing: an unknown, expired or revoked token is "unauthenticated", a
// token for another repository (or a repository since deleted) is "not
// found", so the endpoint tells a prober nothing about what exists.

/** How commits are served (CheckoutServer in repositories/git). */
export interface CheckoutSource {
  viewOf(repo: GitRepository, commit: string): Promise<string>;
  uploadPack(view: string, opts: UploadPackOptions): Promise<boolean>;
}

export interface CheckoutAccess {
  grant: CheckoutGrant;
  /** The view to run upload-pack in. */
  view: string;
  /** How long serving may take at most: until the token expires. */
  remainingMs: number;
}

export class CheckoutService {
  readonly #db: Db;
  readonly #source: CheckoutSource;
  readonly #now: () => Date;

  constructor(opts: { db: Db; source: CheckoutSource; now?: () => Date }) {
    this.#db = opts.db;
    this.#source = opts.source;
    this.#now = opts.now ?? (() => new Date());
  }

  /** null: the token opens nothing (answer 401). Throws not found for another repository's path. */
  async open(token: string, repositoryId: string): Promise<CheckoutAccess | null> {
    const now = this.#now();
    const grant = await checkoutGrantFor(this.#db, token, now);
    if (!grant) return null;
    if (grant.repositoryId !== repositoryId) throw notFound("Repository");
    const repo = await findRepository(this.#db, grant.accountId, grant.repositoryId);
    if (!repo) throw notFound("Repository");
    const view = await this.#source.viewOf(repo, grant.commitHash);
    return { grant, view, remainingMs: grant.expiresAt.getTime() - now.getTime() };
  }

  serve(access: CheckoutAccess, opts: Omit<UploadPackOptions, "account" | "timeoutMs">): Promise<boolean> {
    return this.#source.uploadPack(access.view, { ...opts, account: access.grant.accountId, timeoutMs: Math.max(1000, access.remainingMs) });
  }
}
