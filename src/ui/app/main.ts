// The dashboard's shell: sign-in, navigation and a hash router (#/repos,
// #/runs/<id>, ...), so the server serves one page for every view.

import { ApiError, loadSession, session, signIn, signInMethods, signOut, startOidcSignIn, whenSignedOut, type SignInMethods } from "./api.ts";
import { h, leaveView, show, shownViews, viewError } from "./dom.ts";
import { envPage, integrationsPage, keysPage, oauthPage } from "./account.ts";
import { experimentPage } from "./experiment.ts";
import { analysisPage, repoPage, reposPage } from "./repos.ts";
import { runPage, runsPage } from "./runs.ts";

type View = (params: string[], query: URLSearchParams) => void | Promise<void>;

const ROUTES: [RegExp, View][] = [
  [/^\/repos$/, () => reposPage()],
  [/^\/repos\/([^/]+)$/, ([id], query) => repoPage(id!, query)],
  [/^\/repos\/([^/]+)\/analysis\/([^/]+)$/, ([id, commit]) => analysisPage(id!, commit!)],
  [/^\/repos\/([^/]+)\/experiments\/([^/]+)$/, ([id, experiment]) => experimentPage(id!, experiment!)],
  [/^\/runs$/, (_p, query) => runsPage(query)],
  [/^\/runs\/([^/]+)$/, ([id]) => runPage(id!)],
  [/^\/keys$/, () => keysPage()],
  [/^\/env$/, (_p, query) => envPage(query)],
  [/^\/integrations$/, (_p, query) => integrationsPage(query)],
  [/^\/integrations\/([^/]+)$/, ([id], query) => integrationsPage(query, id)],
  [/^\/oauth$/, () => oauthPage()],
];

async function signInPage(): Promise<void> {
  let methods: SignInMethods;
  try {
    methods = await signInMethods();
  } catch {
    methods = { api_key: true, oidc: null };
  }
  const parts: Node[] = [h("h1", { id: "sign-in-title" }, "Sign in")];
  const error = h("p", { class: "error", role: "alert" });
  let focus: HTMLElement | null = null;
  if (methods.oidc) {
    const provider = methods.oidc.name;
    const button = h("button", { type: "button", id: "oidc-sign-in" }, `Sign in with ${provider}`);
    button.addEventListener("click", async () => {
      error.textContent = "";
      button.disabled = true;
      try {
        // Back to the view asked for, signed in: the provider returns through /oauth/oidc/callback.
        location.assign(await startOidcSignIn(`/ui/${location.hash || "#/repos"}`));
      } catch (err) {
        button.disabled = false;
        error.textContent = err instanceof Error ? err.message : String(err);
      }
    });
    parts.push(h("p", { class: "muted" }, `Sign in with your ${provider} account; codeplane maps it to your account.`), button);
    focus = button;
  }
  if (methods.api_key) {
    const key = h("input", { id: "api-key", name: "api_key", type: "password", autocomplete: "off", required: true, spellcheck: "false" });
    const form = h(
      "form",
      { class: "stack", "aria-labelledby": "sign-in-title" },
      h("label", { for: "api-key" }, "API key of your account (cp_…)", key),
      h("button", { type: "submit" }, "Sign in"),
    );
    form.addEventListener("submit", async (e) => {
      e.preventDefault();
      error.textContent = "";
      try {
        await signIn(key.value);
        key.value = "";
        location.hash = "#/repos";
        await route();
      } catch (err) {
        error.textContent = err instanceof Error ? err.message : String(err);
      }
    });
    parts.push(
      h(
        "p",
        { class: "muted" },
        `${methods.oidc ? "Or paste" : "Paste"} an API key of your account. The key is exchanged for a session cookie and not kept in the browser; signing out, or revoking the key, ends the session.`,
      ),
      form,
    );
    focus = key;
  }
  parts.push(error);
  show(...parts);
  focus?.focus();
}

function chrome(): void {
  const s = session();
  document.getElementById("nav")!.hidden = !s;
  document.getElementById("sign-out")!.hidden = !s;
  document.getElementById("who")!.textContent = s ? `${s.account_name ?? `account ${s.account_id.slice(0, 8)}…`} · ${s.scopes.length} scopes` : "";
  const path = location.hash.slice(1).split("?")[0] ?? "";
  for (const a of document.querySelectorAll<HTMLAnchorElement>("#nav a")) {
    const here = path.startsWith(a.getAttribute("href")!.slice(1));
    if (here) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
}

async function route(): Promise<void> {
  leaveView();
  if (!session()) await loadSession();
  chrome();
  if (!session()) return await signInPage();
  // A line's anchor (#/runs/<id>#L<seq>) belongs to the view, not to its path.
  const [path = "", search = ""] = location.hash
    .slice(1)
    .replace(/#L\d+$/, "")
    .split("?");
  if (!path || path === "/") {
    location.replace("#/repos");
    return;
  }
  for (const [re, view] of ROUTES) {
    const m = re.exec(path);
    if (!m) continue;
    const drawn = shownViews();
    try {
      await view(m.slice(1).map(decodeURIComponent), new URLSearchParams(search));
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) return;
      // The view's error area: what the view drew stays, the error above it; a view that drew nothing gets a heading and a way on.
      const main = document.getElementById("main")!;
      const area = h("div", { id: "view-error", class: "error", role: "alert" }, h("p", {}, viewError(err)));
      if (shownViews() > drawn) main.prepend(area);
      else
        show(
          h("h1", {}, "This page could not be shown"),
          area,
          h("p", {}, h("a", { href: "#/repos" }, "Repositories"), " · ", h("a", { href: "#/runs" }, "Runs")),
        );
    }
    document.getElementById("main")!.focus({ preventScroll: true });
    return;
  }
  show(h("h1", {}, "Not found"), h("p", {}, h("a", { href: "#/repos" }, "Repositories")));
}

whenSignedOut(() => {
  chrome();
  void signInPage();
});
document.getElementById("sign-out")!.addEventListener("click", async () => {
  leaveView();
  await signOut();
  location.hash = "";
  chrome();
  await signInPage();
});
// A path under /ui (the GitHub callback's /ui/integrations/{id}) becomes the same view's hash.
if (location.pathname.length > "/ui/".length && location.pathname.startsWith("/ui/")) {
  history.replaceState(null, "", `/ui/#${location.pathname.slice(3)}${location.search}`);
}
window.addEventListener("hashchange", () => void route());
void route();
