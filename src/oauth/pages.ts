import { createHash } from "node:crypto";

// The authorization page: server-rendered HTML, no script at all, no external
// asset. Its one stylesheet is inline and allowed by its hash in the page's
// Content-Security-Policy, which also forbids framing (clickjacking) and lets
// forms post only here and, for the consent form, redirect to the client's
// redirect URI's origin (browsers apply form-action to a form's redirects).

const STYLE = `
body{font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem;color:#1b1f24;line-height:1.45}
h1{font-size:1.35rem}
.box{border:1px solid #d0d7de;border-radius:8px;padding:1.25rem}
label{display:block;font-weight:600;margin:.75rem 0 .25rem}
input[type=password]{width:100%;box-sizing:border-box;padding:.5rem;font:inherit}
button{font:inherit;padding:.5rem 1.1rem;margin:1rem .5rem 0 0;border-radius:6px;border:1px solid #8c959f;background:#f6f8fa;cursor:pointer}
button.primary{background:#1f6feb;color:#fff;border-color:#1f6feb}
.error{color:#b42318;font-weight:600}
.muted{color:#57606a;font-size:.9rem}
code{background:#f6f8fa;padding:0 .25rem;border-radius:4px}
ul{padding-left:1.25rem}
`;

const STYLE_HASH = `'sha256-${createHash("sha256").update(STYLE, "utf8").digest("base64")}'`;

/** The page's CSP; `formTargets` are the origins a form may redirect to besides this one. */
export function pageCsp(formTargets: readonly string[] = []): string {
  return [
    "default-src 'none'",
    `style-src ${STYLE_HASH}`,
    `form-action 'self'${formTargets.map((o) => ` ${o}`).join("")}`,
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join("; ");
}

export const esc = (s: string): string => s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);

const hidden = (fields: Record<string, string>) =>
  Object.entries(fields)
    .map(([k, v]) => `<input type="hidden" name="${esc(k)}" value="${esc(v)}">`)
    .join("\n");

function layout(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="same-origin">
<title>${esc(title)} · codeplane</title>
<style>${STYLE}</style>
</head>
<body>
<main class="box">
${body}
</main>
</body>
</html>
`;
}

export interface ClientShown {
  name: string;
  clientId: string;
  redirectHost: string;
  /** Registered anonymously or described by its own metadata document: nobody vouches for its name. */
  unverified: boolean;
}

const clientLine = (c: ClientShown) =>
  `<p><strong id="client-name">${esc(c.name)}</strong> wants to use your codeplane account.</p>
<p class="muted">After you decide you will be sent to <strong id="redirect-host">${esc(c.redirectHost)}</strong>.${c.unverified ? ` Its name is the client's own claim (client <code>${esc(c.clientId)}</code>).` : ""}</p>`;

/** `apiKey`: the API-key form is offered; `oidc`: the upstream provider's name, for its button. */
export function signInPage(p: { client: ClientShown; request: Record<string, string>; csrf: string; error?: string; apiKey?: boolean; oidc?: string }): string {
  const oidcForm = p.oidc
    ? `<form method="post" action="/oauth/authorize" id="oidc-sign-in">
${hidden({ ...p.request, cp_action: "oidc", csrf_token: p.csrf })}
<button class="primary" type="submit">Sign in with ${esc(p.oidc)}</button>
</form>`
    : "";
  const keyForm =
    p.apiKey === false
      ? ""
      : `<form method="post" action="/oauth/authorize" id="api-key-sign-in">
${hidden({ ...p.request, cp_action: "sign_in", csrf_token: p.csrf })}
<label for="api_key">${p.oidc ? "Or with an API key of your account" : "API key of your account"}</label>
<input id="api_key" name="api_key" type="password" autocomplete="off" required>
<button${p.oidc ? "" : ' class="primary"'} type="submit">Sign in</button>
</form>`;
  return layout(
    "Sign in",
    `<h1>Sign in to codeplane</h1>
${clientLine(p.client)}
${p.error ? `<p class="error" role="alert">${esc(p.error)}</p>` : ""}
${oidcForm}
${keyForm}`,
  );
}

export function consentPage(p: {
  client: ClientShown;
  request: Record<string, string>;
  csrf: string;
  scopes: readonly string[];
  unavailable: readonly string[];
  account: string;
}): string {
  const list = p.scopes.map((s) => `<li><code>${esc(s)}</code></li>`).join("");
  const missing = p.unavailable.length
    ? `<p class="muted">Also asked, but your sign-in does not carry them (the API key you signed in with, or what this codeplane grants people signed in through its identity provider), so they will not be granted: ${p.unavailable.map((s) => `<code>${esc(s)}</code>`).join(", ")}.</p>`
    : "";
  return layout(
    "Authorize",
    `<h1>Authorize ${esc(p.client.name)}</h1>
${clientLine(p.client)}
<p>Signed in to account <strong>${esc(p.account)}</strong>. It asks for:</p>
<ul id="scopes">${list}</ul>
${missing}
<form method="post" action="/oauth/authorize">
${hidden({ ...p.request, cp_action: "consent", csrf_token: p.csrf })}
<button class="primary" type="submit" name="decision" value="allow">Allow</button>
<button type="submit" name="decision" value="deny">Deny</button>
</form>`,
  );
}

export function errorPage(title: string, message: string): string {
  return layout(
    title,
    `<h1>${esc(title)}</h1>\n<p class="error" role="alert">${esc(message)}</p>\n<p class="muted">Nothing was sent back to the application.</p>`,
  );
}
