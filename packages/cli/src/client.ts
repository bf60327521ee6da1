import type { Credential, Store, Target } from "./config.ts";
import { ApiError, CliError, EXIT, NetworkError, oauthMessage } from "./errors.ts";

// The API over fetch: the bearer credential, an OAuth access token refreshed
// when it has expired (or is refused once), errors as ApiError with the
// API's `detail`, and every page of a list.

export type Query = Record<string, string | number | undefined>;

export interface Page<T> {
  items: T[];
  next_cursor: string | null;
}

export class Client {
  readonly target: Target;
  private readonly store: Store | null;
  private readonly fetchImpl: typeof fetch;
  constructor(target: Target, store: Store | null, fetchImpl: typeof fetch = fetch) {
    this.target = target;
    this.store = store;
    this.fetchImpl = fetchImpl;
  }

  url(path: string, query: Query = {}): string {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) if (v !== undefined) q.set(k, String(v));
    const s = q.toString();
    return `${this.target.url}${path}${s ? `?${s}` : ""}`;
  }

  /** A request with the credential; an expired OAuth token is refreshed first, and a refused one once. */
  async raw(
    method: string,
    path: string,
    init: { query?: Query; json?: unknown; headers?: Record<string, string>; signal?: AbortSignal } = {},
  ): Promise<Response> {
    const send = async () => {
      const headers: Record<string, string> = { accept: "application/json", ...init.headers };
      const token = this.token();
      if (token) headers.authorization = `Bearer ${token}`;
      if (init.json !== undefined) headers["content-type"] = "application/json";
      try {
        return await this.fetchImpl(this.url(path, init.query), {
          method,
          headers,
          ...(init.json !== undefined && { body: JSON.stringify(init.json) }),
          ...(init.signal && { signal: init.signal }),
        });
      } catch (err) {
        if ((err as Error).name === "AbortError") throw err;
        const cause = (err as { cause?: { code?: string; message?: string } }).cause;
        throw new NetworkError(`cannot reach ${this.target.url}: ${cause?.code ?? cause?.message ?? (err as Error).message}`);
      }
    };
    const cred = this.target.credential;
    if (cred?.type === "oauth" && cred.expires_at !== null && cred.expires_at - 30_000 < Date.now() && cred.refresh_token) await this.refresh();
    let res = await send();
    if (res.status === 401 && cred?.type === "oauth" && cred.refresh_token) {
      await res.body?.cancel();
      await this.refresh();
      res = await send();
    }
    return res;
  }

  async request<T>(method: string, path: string, init: { query?: Query; json?: unknown } = {}): Promise<T> {
    const res = await this.raw(method, path, init);
    if (!res.ok) throw await apiError(res, method, path);
    if (res.status === 204) return undefined as T;
    return (await res.json()) as T;
  }

  get<T>(path: string, query?: Query): Promise<T> {
    return this.request<T>("GET", path, { ...(query && { query }) });
  }

  /** Every item of a paged list, following next_cursor (at most `limit` when given). */
  async all<T>(path: string, query: Query = {}, limit?: number): Promise<T[]> {
    const out: T[] = [];
    let cursor: string | undefined;
    do {
      const want = limit === undefined ? 100 : Math.min(100, limit - out.length);
      const page = await this.get<Page<T>>(path, { ...query, limit: want, cursor });
      out.push(...page.items);
      cursor = page.next_cursor ?? undefined;
    } while (cursor && (limit === undefined || out.length < limit));
    return out;
  }

  private token(): string | null {
    const c = this.target.credential;
    return c ? (c.type === "api_key" ? c.key : c.access_token) : null;
  }

  /** Trades the refresh token for new tokens (RFC 6749 6; the old refresh token is spent) and stores them. */
  private async refresh(): Promise<void> {
    const c = this.target.credential as Extract<Credential, { type: "oauth" }>;
    const res = await this.fetchImpl(c.token_endpoint, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", accept: "application/json" },
      body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: c.refresh_token!, client_id: c.client_id }).toString(),
    });
    const body = (await res.json().catch(() => ({}))) as Record<string, unknown>;
    if (!res.ok) {
      throw new CliError(
        `the sign-in to ${this.target.url} has ended (${oauthMessage(body, res.status)}): run \`cpl login ${this.target.url}\` again`,
        EXIT.auth,
      );
    }
    const next: Credential = {
      ...c,
      access_token: String(body.access_token),
      refresh_token: typeof body.refresh_token === "string" ? body.refresh_token : c.refresh_token,
      expires_at: typeof body.expires_in === "number" ? Date.now() + body.expires_in * 1000 : null,
      scope: typeof body.scope === "string" ? body.scope : c.scope,
    };
    this.target.credential = next;
    this.store?.setCredential(this.target.name, next);
  }
}

/** The ApiError for a response that was not a success, with the API's `detail` (or the body's text). */
export async function apiError(res: Response, method: string, path: string): Promise<ApiError> {
  const text = await res.text();
  let detail: unknown = text.trim() || res.statusText;
  try {
    const body = JSON.parse(text) as { detail?: unknown };
    if (body && typeof body === "object" && "detail" in body) detail = body.detail;
  } catch {
    // Not JSON (a proxy's page): the text is the detail.
  }
  return new ApiError(res.status, detail, method, path);
}
