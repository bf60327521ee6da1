import type { Client } from "../client.ts";
import { CliError, EXIT } from "../errors.ts";
import type { Ctx } from "../main.ts";
import { json, table, type Column } from "../output.ts";

// What several commands share: naming a repository by name or id, and
// printing a result as a table or as JSON.

export interface Repository {
  id: string;
  name: string;
  url: string;
  provider: string;
  default_branch: string | null;
  created_at: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The repository named `nameOrId`: an id is read, a name is looked for in the list. */
export async function findRepository(client: Client, nameOrId: string): Promise<Repository> {
  if (UUID.test(nameOrId)) return client.get<Repository>(`/v1/repositories/${nameOrId}`);
  const all = await client.all<Repository>("/v1/repositories");
  const found = all.filter((r) => r.name === nameOrId);
  if (found.length === 1) return found[0]!;
  if (found.length > 1)
    throw new CliError(`${found.length} repositories are named ${JSON.stringify(nameOrId)}: give its id (${found.map((r) => r.id).join(", ")})`, EXIT.usage);
  throw new CliError(`no repository named ${JSON.stringify(nameOrId)} (cpl repos ls lists them)`, EXIT.notFound);
}

/** The ref a command reads at: the one given, or the repository's default branch. */
export function refOf(repo: Repository, given: unknown): string {
  if (typeof given === "string" && given) return given;
  if (!repo.default_branch) throw new CliError(`${repo.name} has no default branch: give a ref`, EXIT.usage);
  return repo.default_branch;
}

export const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);

export function intOption(ctx: Pick<Ctx, "options">, name: string): number | undefined {
  const v = str(ctx.options[name]);
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v) || Number(v) < 1) throw new CliError(`--${name} takes a positive whole number (got ${JSON.stringify(v)})`, EXIT.usage);
  return Number(v);
}

/** A list: JSON as the API gave its items, or a table. */
export function printList<T>(ctx: Ctx, rows: readonly T[], columns: readonly Column<T>[]): void {
  ctx.io.stdout.write(ctx.output === "json" ? json(rows) : table(rows, columns));
}
