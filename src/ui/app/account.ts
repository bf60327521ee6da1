// API keys, environment variables, GitHub installations, OAuth clients and grants.

import { api, ApiError, q, seg, session, type Page } from "./api.ts";
import { field, fmtTime, h, show } from "./dom.ts";

export const SCOPES = [
  "repositories:read",
  "repositories:write",
  "analyses:read",
  "analyses:write",
  "runs:read",
  "runs:write",
  "env:read",
  "env:write",
  "integrations:read",
  "integrations:write",
  "notifications:read",
  "notifications:write",
  "keys:write",
] as const;

interface ApiKey {
  id: string;
  name: string;
  prefix: string;
  scopes: string[];
  created_at: string;
  expires_at: string | null;
  last_used_at: string | null;
}
interface EnvVar {
  id: string;
  name: string;
  value: string | null;
  secret: boolean;
  repository_id: string | null;
  created_at: string;
  updated_at: string;
}
interface Integration {
  id: string;
  installation_id: number;
  account_login: string;
  account_type: string;
  repository_selection: string;
  suspended: boolean;
  created_at: string;
}
interface OAuthClient {
  client_id: string;
  client_name: string;
  redirect_uris: string[];
  grant_types: string[];
  scope: string | null;
  created_at: string;
}
interface OAuthGrant {
  id: string;
  client_id: string;
  client_name: string;
  scopes: string[];
  api_key_id: string;
  created_at: string;
  updated_at: string;
}

/** Shows 422 issues next to the fields they name (by the last part of `loc`), the rest in `general`. */
export function showIssues(err: unknown, fields: Record<string, HTMLElement>, general: HTMLElement): void {
  for (const el of Object.values(fields)) el.textContent = "";
  general.textContent = "";
  if (err instanceof ApiError && Array.isArray(err.detail)) {
    for (const issue of err.detail) {
      const target = fields[String(issue.loc.at(-1))] ?? fields[String(issue.loc[1])];
      if (target) target.textContent = issue.msg;
      else general.textContent += `${issue.loc.join(".")}: ${issue.msg} `;
    }
  } else general.textContent = err instanceof Error ? err.message : String(err);
}

export async function keysPage(): Promise<void> {
  const list = h("tbody");
  const reload = async () => {
    const page = await api<Page<ApiKey>>("/v1/auth/keys?limit=100");
    list.replaceChildren(
      ...page.items.map((k) =>
        h(
          "tr",
          { "data-key-id": k.id },
          h("td", {}, k.name),
          h("td", {}, h("code", {}, `${k.prefix}…`)),
          h("td", {}, k.scopes.join(" ")),
          h("td", {}, fmtTime(k.created_at)),
          h("td", {}, fmtTime(k.expires_at)),
          h("td", {}, fmtTime(k.last_used_at)),
          h(
            "td",
            {},
            k.id === session()?.api_key_id
              ? h("span", { class: "muted" }, "this session's key")
              : h(
                  "button",
                  {
                    type: "button",
                    "aria-label": `Revoke ${k.name}`,
                    onclick: async () => {
                      if (!confirm(`Revoke the key ${k.name}? It stops working at once, with the keys made with it.`)) return;
                      await api(`/v1/auth/keys/${seg(k.id)}`, { method: "DELETE" });
                      await reload();
                    },
                  },
                  "Revoke",
                ),
          ),
        ),
      ),
    );
  };
  const name = h("input", { id: "key-name", required: true, maxlength: 100 });
  const expires = h("input", { id: "key-expires", type: "date" });
  const boxes = SCOPES.map((s) => h("input", { type: "checkbox", value: s, name: "scope" }));
  const errs = { name: h("span", { class: "field-error" }), scopes: h("span", { class: "field-error" }), expires_at: h("span", { class: "field-error" }) };
  const general = h("p", { class: "error", role: "alert" });
  const created = h("div", { "aria-live": "polite" });
  const form = h(
    "form",
    { class: "stack" },
    h("label", { for: "key-name" }, "Name", name, errs.name),
    h(
      "fieldset",
      {},
      h("legend", {}, "Scopes (none ticked: all of this session's)"),
      ...boxes.map((b) => h("label", { class: "check" }, b, b.value)),
      errs.scopes,
    ),
    h("label", { for: "key-expires" }, "Expires (optional)", expires, errs.expires_at),
    h("button", { type: "submit" }, "Create key"),
    general,
  );
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const scopes = boxes.filter((b) => b.checked).map((b) => b.value);
    try {
      const key = await api<ApiKey & { key: string }>("/v1/auth/keys", {
        method: "POST",
        json: {
          name: name.value,
          ...(scopes.length && { scopes }),
          ...(expires.value && { expires_at: new Date(`${expires.value}T23:59:59Z`).toISOString() }),
        },
      });
      showIssues(null, errs, general);
      general.textContent = "";
      created.replaceChildren(
        h("p", { class: "notice" }, `Key ${key.name} created. Copy it now: it is shown only this once.`),
        h("p", { class: "secret", id: "new-key" }, key.key),
      );
      form.reset();
      await reload();
    } catch (err) {
      showIssues(err, errs, general);
    }
  });
  show(
    h("h1", {}, "API keys"),
    h(
      "table",
      {},
      h("thead", {}, h("tr", {}, ...["Name", "Prefix", "Scopes", "Created", "Expires", "Last used", ""].map((t) => h("th", { scope: "col" }, t)))),
      list,
    ),
    h("h2", {}, "Create a key"),
    created,
    form,
  );
  await reload();
}

export async function envPage(query: URLSearchParams): Promise<void> {
  const repo = query.get("repository_id");
  const list = h("tbody");
  const reload = async () => {
    const page = await api<Page<EnvVar>>(`/v1/environment-variables${q({ limit: 100, repository_id: repo })}`);
    list.replaceChildren(
      ...page.items.map((v) =>
        h(
          "tr",
          { "data-env": v.name },
          h("td", {}, h("code", {}, v.name)),
          h("td", {}, v.secret ? h("span", { class: "muted" }, "secret (never shown)") : h("code", {}, v.value ?? "")),
          h("td", {}, v.repository_id ? h("a", { href: `#/repos/${v.repository_id}` }, "repository") : "account"),
          h("td", {}, fmtTime(v.updated_at)),
          h(
            "td",
            {},
            h(
              "button",
              {
                type: "button",
                "aria-label": `Delete ${v.name}`,
                onclick: async () => {
                  if (!confirm(`Delete ${v.name}?`)) return;
                  await api(`/v1/environment-variables/${seg(v.id)}`, { method: "DELETE" });
                  await reload();
                },
              },
              "Delete",
            ),
          ),
        ),
      ),
    );
  };
  const name = h("input", { id: "env-name", required: true, value: query.get("name") ?? "" });
  const value = h("input", { id: "env-value", type: "password", autocomplete: "off", required: true });
  const secret = h("input", { id: "env-secret", type: "checkbox", checked: true });
  const errs = { name: h("span", { class: "field-error" }), value: h("span", { class: "field-error" }) };
  const general = h("p", { class: "error", role: "alert" });
  const form = h(
    "form",
    { class: "stack" },
    h("label", { for: "env-name" }, "Name", name, errs.name),
    h("label", { for: "env-value" }, "Value", value, errs.value),
    h("label", { class: "check" }, secret, "Secret (encrypted, never shown again)"),
    h("button", { type: "submit" }, "Add variable"),
    general,
  );
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    try {
      await api("/v1/environment-variables", {
        method: "POST",
        json: { name: name.value, value: value.value, secret: secret.checked, ...(repo && { repository_id: repo }) },
      });
      showIssues(null, errs, general);
      form.reset();
      await reload();
    } catch (err) {
      showIssues(err, errs, general);
    }
  });
  show(
    h("h1", {}, repo ? "Environment variables of a repository" : "Environment variables"),
    repo ? h("p", {}, "Repository-scoped variables override account ones. ", h("a", { href: "#/env" }, "Account variables")) : null,
    h("table", {}, h("thead", {}, h("tr", {}, ...["Name", "Value", "Scope", "Updated", ""].map((t) => h("th", { scope: "col" }, t)))), list),
    h("h2", {}, "Add a variable"),
    form,
  );
  await reload();
}

interface InstallationRepository {
  github_id: number;
  full_name: string;
  name: string;
  owner: string;
  private: boolean;
  default_branch: string | null;
  html_url: string;
  repository_id: string | null;
}

export async function integrationsPage(query: URLSearchParams, connected?: string): Promise<void> {
  const main = show(
    h("h1", {}, "GitHub installations"),
    query.get("status") === "pending" ? h("p", { class: "notice" }, "The installation waits for an organisation owner's approval.") : null,
    connected ? h("p", { class: "notice", role: "status" }, "Installation connected.") : null,
  );
  try {
    const page = await api<Page<Integration>>("/v1/integrations?limit=100");
    if (!page.items.length) main.append(h("p", { class: "muted" }, "No installation connected."));
    for (const i of page.items) main.append(installationView(i, i.id === connected));
    const install = await api<{ install_url: string }>("/v1/integrations/github/install");
    main.append(h("p", {}, h("a", { href: install.install_url, rel: "noopener" }, "Install the GitHub App on an account or organisation")));
  } catch (err) {
    main.append(h("p", { class: "notice" }, err instanceof Error ? err.message : String(err)));
  }
}

/** One installation, with the repositories it can see: each registered (a link) or registrable. */
function installationView(i: Integration, current: boolean): HTMLElement {
  const rows = h("tbody");
  const more = h("button", { type: "button", hidden: true }, "More");
  const error = h("p", { class: "error", role: "alert" });
  let cursor: string | null = null;
  const load = async () => {
    try {
      const page: Page<InstallationRepository> = await api<Page<InstallationRepository>>(
        `/v1/integrations/${seg(i.id)}/repositories${q({ limit: 50, cursor })}`,
      );
      cursor = page.next_cursor;
      more.hidden = !cursor;
      for (const r of page.items) rows.append(repoRow(r));
    } catch (err) {
      error.textContent = err instanceof Error ? err.message : String(err);
    }
  };
  const repoRow = (r: InstallationRepository): HTMLElement => {
    const auto = h("input", { type: "checkbox", "aria-label": `Analyse pushes to ${r.full_name}` });
    const cell = h("td", {});
    if (r.repository_id) cell.append(h("a", { href: `#/repos/${r.repository_id}` }, "Open"));
    else
      cell.append(
        h("label", { class: "check" }, auto, "analyse pushes"),
        " ",
        h(
          "button",
          {
            type: "button",
            "aria-label": `Register ${r.full_name}`,
            onclick: async () => {
              try {
                const repo = await api<{ id: string }>(`/v1/integrations/${seg(i.id)}/repositories`, {
                  method: "POST",
                  json: { full_name: r.full_name, auto_analyze: auto.checked },
                });
                cell.replaceChildren(h("a", { href: `#/repos/${repo.id}` }, "Open"));
              } catch (err) {
                error.textContent = err instanceof Error ? err.message : String(err);
              }
            },
          },
          "Register",
        ),
      );
    return h("tr", { "data-full-name": r.full_name }, h("td", {}, r.full_name), h("td", {}, r.private ? "private" : "public"), cell);
  };
  more.addEventListener("click", () => void load());
  const list = h(
    "details",
    {},
    h("summary", {}, "Repositories it can see"),
    h("table", {}, h("thead", {}, h("tr", {}, ...["Repository", "Visibility", ""].map((t) => h("th", { scope: "col" }, t)))), rows),
    more,
    error,
  );
  list.addEventListener(
    "toggle",
    () => {
      if (list.open && !rows.childElementCount) void load();
    },
    { once: false },
  );
  return h(
    "section",
    { class: "installation", "data-integration-id": i.id, "aria-current": current ? "true" : null },
    h("h2", {}, `${i.account_login} (${i.account_type})`),
    h(
      "p",
      { class: "muted" },
      `${i.repository_selection === "all" ? "All repositories" : "Selected repositories"} · ${i.suspended ? "suspended · " : ""}connected ${fmtTime(i.created_at)}`,
    ),
    list,
  );
}

export async function oauthPage(): Promise<void> {
  const grants = h("tbody");
  const clients = h("tbody");
  const reload = async () => {
    const [g, c] = await Promise.all([api<Page<OAuthGrant>>("/v1/oauth/grants?limit=100"), api<Page<OAuthClient>>("/v1/oauth/clients?limit=100")]);
    grants.replaceChildren(
      ...g.items.map((x) =>
        h(
          "tr",
          {},
          h("td", {}, x.client_name),
          h("td", {}, x.scopes.join(" ")),
          h("td", {}, fmtTime(x.updated_at)),
          h(
            "td",
            {},
            h(
              "button",
              {
                type: "button",
                onclick: async () => {
                  await api(`/v1/oauth/grants/${seg(x.id)}`, { method: "DELETE" });
                  await reload();
                },
              },
              "Revoke",
            ),
          ),
        ),
      ),
    );
    clients.replaceChildren(
      ...c.items.map((x) =>
        h(
          "tr",
          {},
          h("td", {}, x.client_name),
          h("td", {}, h("code", {}, x.client_id)),
          h("td", {}, x.grant_types.join(" ")),
          h("td", {}, fmtTime(x.created_at)),
          h(
            "td",
            {},
            h(
              "button",
              {
                type: "button",
                onclick: async () => {
                  if (confirm(`Delete ${x.client_name}?`)) {
                    await api(`/v1/oauth/clients/${seg(x.client_id)}`, { method: "DELETE" });
                    await reload();
                  }
                },
              },
              "Delete",
            ),
          ),
        ),
      ),
    );
  };
  show(
    h("h1", {}, "OAuth"),
    h("h2", {}, "Applications you allowed"),
    h("table", {}, h("thead", {}, h("tr", {}, ...["Application", "Scopes", "Last allowed", ""].map((t) => h("th", { scope: "col" }, t)))), grants),
    h("h2", {}, "Clients registered by this account"),
    h("table", {}, h("thead", {}, h("tr", {}, ...["Name", "Client id", "Grants", "Created", ""].map((t) => h("th", { scope: "col" }, t)))), clients),
  );
  await reload();
}

export { field };
