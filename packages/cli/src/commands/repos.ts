import type { Ctx } from "../main.ts";
import { ago, fields, json } from "../output.ts";
import { findRepository, intOption, printList, str, type Repository } from "./common.ts";

const show = (ctx: Ctx, r: Repository) =>
  ctx.io.stdout.write(
    ctx.output === "json"
      ? json(r)
      : fields([
          ["id", r.id],
          ["name", r.name],
          ["url", r.url],
          ["provider", r.provider],
          ["default branch", r.default_branch],
          ["created", r.created_at],
        ]),
  );

export async function add(ctx: Ctx): Promise<void> {
  const client = await ctx.client();
  const body = {
    url: ctx.args[0],
    ...(str(ctx.options.name) && { name: str(ctx.options.name) }),
    ...(str(ctx.options["default-branch"]) && { default_branch: str(ctx.options["default-branch"]) }),
  };
  show(ctx, await client.request<Repository>("POST", "/v1/repositories", { json: body }));
}

export async function list(ctx: Ctx): Promise<void> {
  const client = await ctx.client();
  const repos = await client.all<Repository>("/v1/repositories", {}, intOption(ctx, "limit"));
  printList(ctx, repos, [
    ["name", (r) => r.name],
    ["id", (r) => r.id],
    ["default branch", (r) => r.default_branch],
    ["url", (r) => r.url],
    ["created", (r) => ago(r.created_at)],
  ]);
}

export async function get(ctx: Ctx): Promise<void> {
  show(ctx, await findRepository(await ctx.client(), ctx.args[0]!));
}
