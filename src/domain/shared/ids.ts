import { v7 } from "uuid";

// UUIDv7 ids are time-ordered, so "newest first" is simply "id descending" and
// keyset pagination needs no separate timestamp column.
export const newId = (): string => v7();

export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
