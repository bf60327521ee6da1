// What a warm pod's agent measured before its command started (migration 0029;
// docs/operators/warm-pools.md, "Reading the steps"). The pod sends it with a
// progress report; it is kept only if it has this shape and size, since the
// pod's command could send the same request with the pod's own credential:
// at worst it writes a bounded, well-formed record about its own pod.

import type { AgentDiagnostics } from "../../db/schema.ts";

// The record's shape is the column's (db/schema.ts), where the layers let both sides see it.
export type { AgentDiagnostics };

export const DIAGNOSTICS_MAX_BYTES = 8192;
const MAX_STEPS = 32;
const MAX_NOTES = 20;
const MAX_NOTE_CHARS = 300;
const STEP_NAME = /^[a-z][a-z0-9_]{0,39}$/;

/** The record in a progress report's body, or null when the body is empty or not one. */
export function parseAgentDiagnostics(text: string): AgentDiagnostics | null {
  if (!text.trim() || Buffer.byteLength(text) > DIAGNOSTICS_MAX_BYTES) return null;
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof body !== "object" || body === null) return null;
  const { steps_ms: steps, notes } = body as { steps_ms?: unknown; notes?: unknown };
  if (typeof steps !== "object" || steps === null || Array.isArray(steps)) return null;
  const entries = Object.entries(steps);
  if (entries.length > MAX_STEPS) return null;
  const out: AgentDiagnostics = { steps_ms: {}, notes: [] };
  for (const [name, ms] of entries) {
    if (!STEP_NAME.test(name) || typeof ms !== "number" || !Number.isFinite(ms) || ms < 0) return null;
    out.steps_ms[name] = Math.round(ms);
  }
  if (notes !== undefined) {
    if (!Array.isArray(notes) || notes.length > MAX_NOTES || !notes.every((n) => typeof n === "string")) return null;
    // Postgres' jsonb holds no \u0000: one would fail the whole report (and its step's time) with a 500.
    out.notes = notes.map((n) => n.replaceAll("\u0000", "").slice(0, MAX_NOTE_CHARS));
  }
  return out;
}
