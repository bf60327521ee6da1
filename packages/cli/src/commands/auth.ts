import { trimUrl, type Credential } from "../config.ts";
import { Client } from "../client.ts";
import { ApiError, CliError, EXIT } from "../errors.ts";
import type { Ctx } from "../main.ts";
import { json, table } from "../output.ts";
import { str } from "./common.ts";

/** Checks that a credential works against the server: a 401 refuses it; a 403 (a key without that scope) does not. */
async function verify(name: string, url: string, credential: Credential): Promise<void> {
  try {
    await new Client({ name, url, credential }, null).get("/v1/repositories", { limit: 1 });
  } catch (err) {
    if (err instanceof ApiError && err.status === 403) return;
    if (err instanceof ApiError && err.status === 401) throw new CliError(`${url} refused the credential: ${String(err.detail)}`, EXIT.auth);
    throw err;
  }
}

export async function login(ctx: Ctx): Promise<void> {
  const url = trimUrl(ctx.args[0]!);
  const name = str(ctx.options.name) ?? new URL(url).host;
  let credential: Credential;
  if (ctx.options["api-key-stdin"]) {
    const key = (await ctx.io.readStdin()).trim();
    if (!key) throw new CliError("no API key on stdin", EXIT.usage);
    credential = { type: "api_key", key };
  } else {
    const { browserSignIn, openInBrowser } = await import("../oauth.ts");
    credential = await browserSignIn({
      base: url,
      scopes:
        str(ctx.options.scopes)
          ?.split(/[\s,]+/)
          .filter(Boolean) ?? null,
      ...(ctx.io.signal && { signal: ctx.io.signal }),
      async open(authorizeUrl) {
        if (ctx.io.openBrowser) return ctx.io.openBrowser(authorizeUrl);
        const opened = !ctx.options["no-browser"] && (await openInBrowser(authorizeUrl, ctx.io.env));
        ctx.io.stderr.write(
          opened
            ? `Opened the sign-in page in your browser. If it did not open, visit:\n  ${authorizeUrl}\n`
            : `Open this page to sign in:\n  ${authorizeUrl}\n`,
        );
      },
    });
  }
  await verify(name, url, credential);
  const store = await ctx.store();
  const config = store.readConfig();
  config.contexts[name] = { url };
  config.current = name;
  store.setCredential(name, credential);
  store.writeConfig(config);
  const how = credential.type === "api_key" ? "an API key" : `OAuth${credential.scope ? ` (${credential.scope})` : ""}`;
  if (ctx.output === "json") ctx.io.stdout.write(json({ context: name, url, credential: credential.type }));
  else ctx.io.stdout.write(`signed in to ${url} with ${how}; context ${JSON.stringify(name)} is now current\n`);
}

export async function logout(ctx: Ctx): Promise<void> {
  const store = await ctx.store();
  const config = store.readConfig();
  const name = str(ctx.options.context) ?? ctx.io.env.CPL_CONTEXT ?? config.current;
  if (!name || !config.contexts[name]) throw new CliError("not signed in", EXIT.auth);
  const credential = store.credential(name);
  let revoked = false;
  if (credential?.type === "oauth") revoked = await (await import("../oauth.ts")).revoke(credential);
  store.setCredential(name, null);
  ctx.io.stdout.write(`signed out of ${config.contexts[name].url}${revoked ? " (token revoked)" : ""}\n`);
}

export async function contextsList(ctx: Ctx): Promise<void> {
  const store = await ctx.store();
  const config = store.readConfig();
  const creds = store.readCredentials();
  const rows = Object.entries(config.contexts).map(([name, c]) => ({
    name,
    url: c.url,
    current: name === config.current,
    credential: creds[name]?.type ?? null,
  }));
  ctx.io.stdout.write(
    ctx.output === "json"
      ? json(rows)
      : table(rows, [
          ["current", (r) => (r.current ? "*" : "")],
          ["name", (r) => r.name],
          ["url", (r) => r.url],
          ["credential", (r) => r.credential ?? "(signed out)"],
        ]),
  );
}

export async function contextsUse(ctx: Ctx): Promise<void> {
  const store = await ctx.store();
  const config = store.readConfig();
  const name = ctx.args[0]!;
  if (!config.contexts[name]) throw new CliError(`no context named ${JSON.stringify(name)} (cpl contexts ls)`, EXIT.notFound);
  config.current = name;
  store.writeConfig(config);
  ctx.io.stdout.write(`now using ${name} (${config.contexts[name].url})\n`);
}

export async function contextsRemove(ctx: Ctx): Promise<void> {
  const store = await ctx.store();
  const config = store.readConfig();
  const name = ctx.args[0]!;
  if (!config.contexts[name]) throw new CliError(`no context named ${JSON.stringify(name)}`, EXIT.notFound);
  const credential = store.credential(name);
  if (credential?.type === "oauth") await (await import("../oauth.ts")).revoke(credential);
  delete config.contexts[name];
  if (config.current === name) config.current = null;
  store.setCredential(name, null);
  store.writeConfig(config);
  ctx.io.stdout.write(`removed ${name}\n`);
}
