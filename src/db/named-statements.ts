import pg from "pg";

// Postgres plans an unnamed statement again on every execution; for the page
// of repositories that planning was half of Postgres's time on the query
// (bench, 103 -> 52 µs a query once named). A hot statement opts in by
// starting its SQL with a marker, `/* statement: <name> */`, written in its row
// module beside the SQL itself: a client of the pool then prepares it once
// per connection under that name and only binds and executes it afterwards.
// Only marked statements are named, so the set stays small and fixed (each is
// kept by every connection) and each one's generic plan is a decision made,
// and tested, with the SQL (test/db/named-statements.test.ts).
//
// A pooler in transaction mode must support protocol-level prepared statements
// (PgBouncer 1.21 and later, max_prepared_statements > 0);
// CODEPLANE_DB_PREPARED_STATEMENTS=false sends every statement unnamed.

const MARKER = /^\/\* statement: ([a-z][a-z0-9_]{0,62}) \*\//;

/** The marker that makes a statement named: prepend it to the SQL text. */
export const statementMarker = (name: string): string => {
  if (!MARKER.test(`/* statement: ${name} */`)) throw new Error(`not a statement name: ${name}`);
  return `/* statement: ${name} */ `;
};

/** The statement's name when its SQL carries the marker. */
export function statementName(text: string): string | null {
  // The common case, SQL without a marker, costs one character comparison.
  if (text.charCodeAt(0) !== 47) return null;
  return MARKER.exec(text)?.[1] ?? null;
}

/** A pg Client that sends marked statements under their name (see above). */
export class NamedStatementClient extends pg.Client {
  // pg's query() has many overloads; Kysely calls query(text, values).
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the override must accept every overload pg.Client declares
  override query(...args: any[]): any {
    const [first, values, callback] = args as [unknown, unknown, ((err: Error, result: pg.QueryResult) => void) | undefined];
    if (typeof first === "string" && Array.isArray(values)) {
      const name = statementName(first);
      if (name) return callback ? super.query({ name, text: first, values }, callback) : super.query({ name, text: first, values });
    }
    return (super.query as (...a: unknown[]) => unknown)(...(args as unknown[]));
  }
}
