import type { Client } from "../client.ts";
import { ApiError, CliError, EXIT } from "../errors.ts";
import type { Ctx } from "../main.ts";
import { ago, json } from "../output.ts";
import { findRepository, intOption, printList, str, type Repository } from "./common.ts";

interface Variable {
  id: string;
  name: string;
  value: string | null;
  secret: boolean;
  repository_id: string | null;
  created_at: string;
  updated_at: string;
}

const PATH = "/v1/environment-variables";

async function scope(ctx: Ctx, client: Client): Promise<Repository | null> {
  const name = str(ctx.options.repo);
  return name ? findRepository(client, name) : null;
}

/** The variable called `name` in exactly this scope (the account's, or one repository's). */
async function findVariable(client: Client, name: string, repo: Repository | null): Promise<Variable | undefined> {
  const all = await client.all<Variable>(PATH, { repository_id: repo?.id });
  return all.find((v) => v.name === name && v.repository_id === (repo?.id ?? null));
}

export async function set(ctx: Ctx): Promise<void> {
  const client = await ctx.client();
  const repo = await scope(ctx, client);
  const name = ctx.args[0]!;
  // From stdin when not given, so a secret stays out of the shell's history; one final newline is not part of it.
  const value = ctx.args[1] ?? (await ctx.io.readStdin()).replace(/\r?\n$/, "");
  const secret = !ctx.options.plain;
  let v: Variable;
  try {
    v = await client.request<Variable>("POST", PATH, { json: { name, value, secret, ...(repo && { repository_id: repo.id }) } });
  } catch (err) {
    if (!(err instanceof ApiError && err.status === 409)) throw err;
    const existing = await findVariable(client, name, repo);
    if (!existing) throw err;
    v = await client.request<Variable>("PATCH", `${PATH}/${existing.id}`, { json: { value, secret } });
  }
  ctx.io.stdout.write(ctx.output === "json" ? json(v) : `${v.name} set${repo ? ` for ${repo.name}` : " for the account"}${v.secret ? " (secret)" : ""}\n`);
}

export async function list(ctx: Ctx): Promise<void> {
  const client = await ctx.client();
  const repo = await scope(ctx, client);
  const vars = await client.all<Variable>(PATH, { repository_id: repo?.id }, intOption(ctx, "limit"));
  const names = new Map<string, string>();
  if (ctx.output !== "json" && vars.some((v) => v.repository_id)) for (const r of await client.all<Repository>("/v1/repositories")) names.set(r.id, r.name);
  printList(ctx, vars, [
    ["name", (v) => v.name],
    ["value", (v) => (v.secret ? "(secret)" : v.value)],
    ["scope", (v) => (v.repository_id ? (names.get(v.repository_id) ?? v.repository_id) : "account")],
    ["updated", (v) => ago(v.updated_at)],
  ]);
}

export async function remove(ctx: Ctx): Promise<void> {
  const client = await ctx.client();
  const repo = await scope(ctx, client);
  const v = await findVariable(client, ctx.args[0]!, repo);
  if (!v) throw new CliError(`no variable ${ctx.args[0]} ${repo ? `for ${repo.name}` : "for the account (give --repo for a repository's)"}`, EXIT.notFound);
  await client.request("DELETE", `${PATH}/${v.id}`);
  if (ctx.output === "json") ctx.io.stdout.write(json({ deleted: v.id }));
  else ctx.io.stdout.write(`${v.name} deleted\n`);
}
