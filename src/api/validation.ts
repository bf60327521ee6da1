import type { z } from "zod";
import type { ValidationIssue } from "../domain/errors.ts";
import { KEY_LOC, unstorableTextIssues } from "../domain/shared/storable-text.ts";

// Maps zod issues onto the FastAPI/pydantic vocabulary the contract promises,
// so clients written against that style of API can read our 422s unchanged.

export type Location = "body" | "query" | "path" | "header";

const describe = (v: unknown) => (typeof v === "string" ? `'${v}'` : JSON.stringify(v));

function valueAt(root: unknown, path: PropertyKey[]): unknown {
  let cur = root;
  for (const key of path) {
    if (cur === null || typeof cur !== "object") return undefined;
    cur = (cur as Record<PropertyKey, unknown>)[key];
  }
  return cur;
}

const TYPE_NAMES: Record<string, [type: string, msg: string]> = {
  string: ["string_type", "Input should be a valid string"],
  number: ["float_type", "Input should be a valid number"],
  int: ["int_type", "Input should be a valid integer"],
  boolean: ["bool_type", "Input should be a valid boolean"],
  array: ["list_type", "Input should be a valid list"],
  object: ["model_type", "Input should be a valid dictionary or object to extract fields from"],
};

type Loc = ValidationIssue["loc"];

function invalidType(issue: z.core.$ZodIssueInvalidType, loc: Loc, value: unknown): ValidationIssue {
  if (value === undefined) return { loc, msg: "Field required", type: "missing" };
  // Query and path values arrive as text, so a bad number is a parse failure, not a type mismatch.
  if ((issue.expected === "number" || issue.expected === "int") && typeof value === "string") {
    return { loc, msg: "Input should be a valid integer, unable to parse string as an integer", type: "int_parsing" };
  }
  const [type, msg] = TYPE_NAMES[issue.expected] ?? [`${issue.expected}_type`, `Input should be a valid ${issue.expected}`];
  return { loc, msg, type };
}

function tooBig(issue: z.core.$ZodIssueTooBig, loc: Loc): ValidationIssue {
  const n = Number(issue.maximum);
  if (issue.origin === "string") return { loc, msg: `String should have at most ${n} characters`, type: "string_too_long" };
  if (issue.origin === "array" || issue.origin === "set") return { loc, msg: `List should have at most ${n} items`, type: "too_long" };
  return issue.inclusive
    ? { loc, msg: `Input should be less than or equal to ${n}`, type: "less_than_equal" }
    : { loc, msg: `Input should be less than ${n}`, type: "less_than" };
}

function tooSmall(issue: z.core.$ZodIssueTooSmall, loc: Loc): ValidationIssue {
  const n = Number(issue.minimum);
  if (issue.origin === "string") {
    return { loc, msg: `String should have at least ${n} character${n === 1 ? "" : "s"}`, type: "string_too_short" };
  }
  if (issue.origin === "array" || issue.origin === "set") {
    return { loc, msg: `List should have at least ${n} item${n === 1 ? "" : "s"}`, type: "too_short" };
  }
  return issue.inclusive
    ? { loc, msg: `Input should be greater than or equal to ${n}`, type: "greater_than_equal" }
    : { loc, msg: `Input should be greater than ${n}`, type: "greater_than" };
}

function invalidValue(issue: z.core.$ZodIssueInvalidValue, loc: Loc): ValidationIssue {
  const vals = issue.values.map(describe);
  const list = vals.length > 1 ? `${vals.slice(0, -1).join(", ")} or ${vals[vals.length - 1]}` : (vals[0] ?? "");
  return { loc, msg: `Input should be ${list}`, type: vals.length > 1 ? "enum" : "literal_error" };
}

function invalidFormat(issue: z.core.$ZodIssueInvalidStringFormat, loc: Loc): ValidationIssue {
  if (issue.format === "uuid" || issue.format.startsWith("uuid")) return { loc, msg: "Input should be a valid UUID", type: "uuid_parsing" };
  if (issue.format === "datetime") return { loc, msg: "Input should be a valid datetime", type: "datetime_parsing" };
  if (issue.format === "url") return { loc, msg: "Input should be a valid URL", type: "url_parsing" };
  if (issue.format === "regex") return { loc, msg: `String ${issue.message}`, type: "string_pattern_mismatch" };
  return { loc, msg: `Value error, invalid ${issue.format}`, type: "value_error" };
}

/** One zod issue as the API reports it (loc, msg, type): one entry, or one per unrecognised key. */
function one(issue: z.core.$ZodIssue, location: Location, input: unknown): ValidationIssue[] {
  const path = issue.path.map((p) => (typeof p === "symbol" ? String(p) : p));
  const loc = [location, ...path];
  switch (issue.code) {
    case "invalid_type":
      return [invalidType(issue, loc, valueAt(input, issue.path))];
    case "too_big":
      return [tooBig(issue, loc)];
    case "too_small":
      return [tooSmall(issue, loc)];
    case "unrecognized_keys":
      return issue.keys.map((k) => ({ loc: [...loc, k], msg: "Extra inputs are not permitted", type: "extra_forbidden" }));
    case "invalid_value":
      return [invalidValue(issue, loc)];
    case "invalid_format":
      return [invalidFormat(issue, loc)];
    case "invalid_union":
      return [{ loc, msg: "Input does not match any allowed shape", type: "union_tag_invalid" }];
    default:
      return [{ loc, msg: `Value error, ${issue.message}`, type: "value_error" }];
  }
}

export function toValidationIssues(error: z.ZodError, location: Location, input: unknown): ValidationIssue[] {
  return error.issues.flatMap((i) => one(i, location, input));
}

/**
 * Validates one part of a request (path, query or body): first the text rule
 * (no NUL, no unpaired surrogate) for every string and object key in it,
 * whatever the schema says about them, so no route can forget it; then the
 * schema. A field refused by the text rule gets only that issue (its pattern,
 * UUID or enum mismatch would say the same thing less clearly); every other
 * field's issues are reported with it.
 */
export function validatePart(
  schema: z.ZodType,
  value: unknown,
  location: Location,
): { success: true; data: unknown } | { success: false; issues: ValidationIssue[] } {
  const text = unstorableTextIssues(value, [location]);
  const r = schema.safeParse(value);
  if (r.success && !text.length) return { success: true, data: r.data };
  if (r.success) return { success: false, issues: text };
  // The fields refused (a key's loc without its "[key]"), looked up by every prefix of a zod issue's loc: linear in the issues.
  const refused = new Set(text.map((t) => JSON.stringify(t.loc[t.loc.length - 1] === KEY_LOC ? t.loc.slice(0, -1) : t.loc)));
  const covered = (loc: ValidationIssue["loc"]) => loc.some((_k, i) => refused.has(JSON.stringify(loc.slice(0, i + 1))));
  const rest = toValidationIssues(r.error, location, value).filter((i) => !covered(i.loc));
  return { success: false, issues: [...text, ...rest] };
}
