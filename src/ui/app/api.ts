// The dashboard's only way to the data: the public /v1 API, with the session
// cookie (sent by the browser) and, on anything but GET, the session's CSRF token.

export interface SessionView {
  account_id: string;
  /** The account's name (null from a service that predates it). */
  account_name?: string | null;
  api_key_id: string;
  scopes: string[];
  expires_at: string;
  csrf_token: string;
}

export interface ValidationIssue {
  loc: (string | number)[];
  msg: string;
  type: string;
}

export class ApiError extends Error {
  readonly status: number;
  readonly detail: string | ValidationIssue[];
  constructor(status: number, detail: string | ValidationIssue[]) {
    super(typeof detail === "string" ? detail : detail.map((d) => `${d.loc.join(".")}: ${d.msg}`).join("; "));
    this.status = status;
    this.detail = detail;
  }
}

export interface Page<T> {
  items: T[];
  next_cursor: string | null;
}

let current: SessionView | null = null;
/** Called when /v1 says the session is gone (expired, revoked, or its key revoked). */
let onSignedOut: () => void = () => {};

export const session = (): SessionView | null => current;
export const whenSignedOut = (f: () => void): void => {
  onSignedOut = f;
};

async function errorOf(res: Response): Promise<ApiError> {
  let detail: string | ValidationIssue[] = res.statusText || `HTTP ${res.status}`;
  try {
    const body = (await res.json()) as { detail?: string | ValidationIssue[] };
    if (body.detail) detail = body.detail;
  } catch {
    // not JSON
  }
  return new ApiError(res.status, detail);
}

export async function loadSession(): Promise<SessionView | null> {
  const res = await fetch("/ui/session", { credentials: "same-origin", cache: "no-store" });
  current = res.ok ? ((await res.json()) as SessionView) : null;
  return current;
}

export async function signIn(apiKey: string): Promise<SessionView> {
  const res = await fetch("/ui/session", {
    method: "POST",
    credentials: "same-origin",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ api_key: apiKey }),
  });
  if (!res.ok) throw await errorOf(res);
  await res.json();
  const s = await loadSession();
  if (!s) throw new ApiError(401, "Signed in, but the session did not stick (are cookies blocked?)");
  return s;
}

/** How one signs in here (GET /ui/sign-in): the API-key form unless turned off, the OIDC provider's button when configured. */
export interface SignInMethods {
  api_key: boolean;
  oidc: { name: string } | null;
}

export async function signInMethods(): Promise<SignInMethods> {
  const res = await fetch("/ui/sign-in", { credentials: "same-origin", cache: "no-store" });
  if (!res.ok) throw await errorOf(res);
  return (await res.json()) as SignInMethods;
}

/** Starts a sign-in at the OIDC provider that comes back to `returnTo` (a /ui path): the provider's URL to go to. */
export async function startOidcSignIn(returnTo: string): Promise<string> {
  const res = await fetch("/ui/sign-in/oidc", {
    method: "POST",
    credentials: "same-origin",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ return_to: returnTo }),
  });
  if (!res.ok) throw await errorOf(res);
  return ((await res.json()) as { authorization_url: string }).authorization_url;
}

export async function signOut(): Promise<void> {
  await fetch("/ui/session", { method: "DELETE", credentials: "same-origin", headers: current ? { "x-csrf-token": current.csrf_token } : {} });
  current = null;
}

export async function api<T>(path: string, init: { method?: string; json?: unknown } = {}): Promise<T> {
  const method = init.method ?? "GET";
  const headers: Record<string, string> = {};
  if (method !== "GET" && current) headers["x-csrf-token"] = current.csrf_token;
  if (init.json !== undefined) headers["content-type"] = "application/json";
  const res = await fetch(path, { method, credentials: "same-origin", headers, ...(init.json !== undefined && { body: JSON.stringify(init.json) }) });
  if (res.status === 401) {
    current = null;
    onSignedOut();
    throw await errorOf(res);
  }
  if (!res.ok) throw await errorOf(res);
  return (res.status === 204 ? undefined : await res.json()) as T;
}

export const q = (params: Record<string, string | number | null | undefined>): string => {
  const u = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== "") u.set(k, String(v));
  const s = u.toString();
  return s ? `?${s}` : "";
};

/** A path segment, encoded. */
export const seg = (s: string): string => encodeURIComponent(s);
/** A file path under /files/, each segment encoded. */
export const filePath = (p: string): string => p.split("/").map(encodeURIComponent).join("/");
