import { CliError, EXIT } from "../errors.ts";
import type { Ctx } from "../main.ts";
import { ago, fields, json } from "../output.ts";
import { intOption, printList, str } from "./common.ts";

interface Key {
  id: string;
  name: string;
  prefix: string;
  scopes: string[];
  created_at: string;
  expires_at: string | null;
  last_used_at?: string | null;
  key?: string;
}

const PATH = "/v1/auth/keys";

export async function create(ctx: Ctx): Promise<void> {
  const client = await ctx.client();
  const scopes = str(ctx.options.scopes)
    ?.split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  const key = await client.request<Key>("POST", PATH, {
    json: { name: ctx.args[0], ...(scopes && { scopes }), ...(str(ctx.options["expires-at"]) && { expires_at: str(ctx.options["expires-at"]) }) },
  });
  if (ctx.output === "json") {
    ctx.io.stdout.write(json(key));
    return;
  }
  ctx.io.stdout.write(
    fields([
      ["id", key.id],
      ["name", key.name],
      ["scopes", key.scopes.join(" ")],
      ["expires", key.expires_at ?? "never"],
      ["key", key.key],
    ]),
  );
  ctx.io.stderr.write("the key is shown only this once: keep it now\n");
}

export async function list(ctx: Ctx): Promise<void> {
  const keys = await (await ctx.client()).all<Key>(PATH, {}, intOption(ctx, "limit"));
  printList(ctx, keys, [
    ["id", (k) => k.id],
    ["name", (k) => k.name],
    ["prefix", (k) => k.prefix],
    ["scopes", (k) => k.scopes.join(" ")],
    ["created", (k) => ago(k.created_at)],
    ["expires", (k) => k.expires_at ?? "never"],
    ["last used", (k) => ago(k.last_used_at)],
  ]);
}

export async function revoke(ctx: Ctx): Promise<void> {
  const client = await ctx.client();
  const wanted = ctx.args[0]!;
  const matches = (await client.all<Key>(PATH)).filter((k) => k.id === wanted || k.prefix === wanted);
  if (matches.length !== 1) {
    throw new CliError(
      matches.length ? `${matches.length} keys have the prefix ${wanted}: give the id` : `no key with the id or prefix ${wanted} (cpl keys ls)`,
      matches.length ? EXIT.usage : EXIT.notFound,
    );
  }
  const key = matches[0]!;
  await client.request("DELETE", `${PATH}/${key.id}`);
  ctx.io.stdout.write(ctx.output === "json" ? json({ revoked: key.id }) : `revoked ${key.name} (${key.prefix})\n`);
}
