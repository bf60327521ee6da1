import type { Ctx } from "../main.ts";
import { json, table } from "../output.ts";
import { findRepository, intOption, refOf } from "./common.ts";

interface Entry {
  name: string;
  path: string;
  type: "file" | "dir" | "symlink" | "submodule";
  size: number | null;
}

interface Tree {
  commit_hash: string;
  path: string;
  entries: Entry[];
  next_cursor: string | null;
}

interface File {
  commit_hash: string;
  path: string;
  size: number;
  encoding: "utf-8" | "base64";
  content: string;
  truncated: boolean;
}

const encodePath = (p: string) => p.split("/").filter(Boolean).map(encodeURIComponent).join("/");

export async function list(ctx: Ctx): Promise<void> {
  const client = await ctx.client();
  const repo = await findRepository(client, ctx.args[0]!);
  const ref = refOf(repo, ctx.options.ref);
  const limit = intOption(ctx, "limit");
  const base = `/v1/repositories/${repo.id}/files`;
  const path = ctx.args[1]?.replace(/^\/+|\/+$/g, "") || undefined;
  // A directory's pages, all read at the commit the first one resolved the ref to.
  const first = await client.get<Tree>(base, { ref, path, limit: Math.min(limit ?? 100, 100) });
  const entries = [...first.entries];
  for (let cursor = first.next_cursor; cursor && (limit === undefined || entries.length < limit);) {
    const page = await client.get<Tree>(base, { ref: first.commit_hash, path, cursor, limit: Math.min((limit ?? Infinity) - entries.length, 100) });
    entries.push(...page.entries);
    cursor = page.next_cursor;
  }
  if (ctx.output === "json") {
    ctx.io.stdout.write(json({ commit_hash: first.commit_hash, path: first.path, entries }));
    return;
  }
  ctx.io.stdout.write(
    table(entries, [
      ["type", (e) => e.type],
      ["size", (e) => e.size],
      ["name", (e) => (e.type === "dir" ? `${e.name}/` : e.name)],
    ]),
  );
}

export async function cat(ctx: Ctx): Promise<void> {
  const client = await ctx.client();
  const repo = await findRepository(client, ctx.args[0]!);
  const ref = refOf(repo, ctx.options.ref);
  const file = await client.get<File>(`/v1/repositories/${repo.id}/files/${encodePath(ctx.args[1]!)}`, { ref });
  if (ctx.output === "json") {
    ctx.io.stdout.write(json(file));
    return;
  }
  ctx.io.stdout.write(file.encoding === "base64" ? Buffer.from(file.content, "base64") : file.content);
  if (file.truncated)
    ctx.io.stderr.write(
      `cpl: ${file.path} is ${file.size} bytes; only the first ${Buffer.byteLength(file.content, file.encoding === "base64" ? "base64" : "utf8")} were sent\n`,
    );
}
