import type { RouteConfig } from "@asteasolutions/zod-to-openapi";
import { describe, expect, it } from "vitest";
import type { z } from "zod";
import { buildOpenApiDocument } from "./openapi.ts";
import { documentedRoutes } from "./app.ts";
import type { Routes } from "./route.ts";

// The OpenAPI document must publish what the server enforces on a string: a
// zod `.refine` or `.transform` is invisible in the document, so a client (or a
// schema-driven fuzzer) generating values from it would send ones the server
// refuses with 422 (issue 29: `GET /v1/runs?cursor=%C3%90`). Registering the
// routes only stores their declarations, so no service is needed here.

function allRoutes(): Routes {
  return documentedRoutes();
}

interface StringField {
  where: string;
  schema: z.ZodType;
  /** A refinement or transform somewhere on the field: a rule the document cannot show. */
  hidden: boolean;
  /** A `.regex` on the string itself: published as `pattern`. */
  pattern: boolean;
}

type Def = { type: string; checks?: { _zod: { def: { check: string; format?: string } } }[]; [k: string]: unknown };
const defOf = (s: unknown) => (s as { _zod: { def: Def } })._zod.def;
const hasCheck = (def: Def, check: string, format?: string) =>
  (def.checks ?? []).some((c) => c._zod.def.check === check && (format === undefined || c._zod.def.format === format));

/** Every string a schema holds, through wrappers, pipes, objects, arrays, records and unions. */
function stringFields(schema: z.ZodType, where: string, hidden = false, top: z.ZodType = schema): StringField[] {
  const def = defOf(schema);
  const here = hidden || hasCheck(def, "custom");
  // A wrapper's refinement is the string's; an object's or array's (a rule across fields or items) is not.
  const sub = (s: unknown, w = where, wrapper = true) => stringFields(s as z.ZodType, w, wrapper && here, wrapper ? top : (s as z.ZodType));
  switch (def.type) {
    case "string":
      return [{ where, schema: top, hidden: here, pattern: hasCheck(def, "string_format", "regex") }];
    case "optional":
    case "nullable":
    case "default":
    case "readonly":
    case "prefault":
      return sub(def.innerType);
    case "pipe":
      return defOf(def.out).type === "transform" ? stringFields(def.in as z.ZodType, where, true, top) : sub(def.in);
    case "object":
      return Object.entries(def.shape as Record<string, unknown>).flatMap(([k, v]) => sub(v, `${where}.${k}`, false));
    case "array":
      return sub(def.element, `${where}[]`, false);
    case "record":
      return sub(def.valueType, `${where}{}`, false);
    case "union":
      return (def.options as unknown[]).flatMap((o, i) => sub(o, `${where}|${i}`, false));
    default:
      return [];
  }
}

const routeConfigs = (routes: Routes): RouteConfig[] => routes.registry.definitions.flatMap((d) => (d.type === "route" ? [d.route] : []));

function requestFields(route: RouteConfig): StringField[] {
  const id = `${route.method.toUpperCase()} ${route.path}`;
  const r = route.request;
  const media = r?.body?.content["application/json"];
  const body = media && "schema" in media ? (media.schema as z.ZodType) : undefined;
  return [
    ...(r?.params ? stringFields(r.params as z.ZodType, `${id} path`) : []),
    ...(r?.query ? stringFields(r.query as z.ZodType, `${id} query`) : []),
    ...(body ? stringFields(body, `${id} body`) : []),
  ];
}

type Param = {
  name: string;
  in: string;
  schema: { type?: string; pattern?: string; maxLength?: number; minLength?: number; format?: string; enum?: string[] };
};
type Doc = { paths: Record<string, Record<string, { parameters?: Param[] }>> };

/** What the published schema of a string parameter allows (the JSON Schema keywords the document uses for them). */
function publishedAllows(s: Param["schema"], v: string): boolean {
  const length = [...v].length;
  if (s.pattern !== undefined && !new RegExp(s.pattern, "u").test(v)) return false;
  if (s.maxLength !== undefined && length > s.maxLength) return false;
  if (s.minLength !== undefined && length < s.minLength) return false;
  if (s.enum && !s.enum.includes(v)) return false;
  if (s.format === "uuid" && !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(v)) return false;
  return true;
}

// Values a client could send for any string parameter: the issue's own, git's ref rules, base64url, lengths.
const PROBES = [
  "Ð",
  "a",
  "main",
  "feature/x",
  "-x",
  "a..b",
  "a b",
  "x.lock",
  "@",
  "AAAA",
  "%",
  "djE6MDE5MGIxYzItM2Q0ZS03ZjAwLThhMWItMmMzZDRlNWY2YTdi",
  "0190b1c2-3d4e-7f00-8a1b-2c3d4e5f6a7b",
  "../x",
  "a\\b",
  "x".repeat(65),
  "x".repeat(300),
  "a".repeat(8193),
];

describe("the OpenAPI document publishes what the server enforces on strings", () => {
  const routes = allRoutes();
  const fields = routeConfigs(routes).flatMap(requestFields);

  it("finds the request strings (the walk sees the routes)", () => {
    expect(fields.length).toBeGreaterThan(20);
    expect(fields.map((f) => f.where)).toEqual(
      expect.arrayContaining(["GET /v1/runs query.cursor", "POST /v1/repositories/{repository_id}/{commit_hash}/runs path.commit_hash"]),
    );
  });

  it("every string with a refinement or transform also has a .regex, so the document carries its pattern", () => {
    const unpublished = fields.filter((f) => f.hidden && !f.pattern).map((f) => f.where);
    expect(unpublished).toEqual([]);
  });

  it("a string parameter value its zod schema refuses on syntax is refused by the published schema too", () => {
    const doc = buildOpenApiDocument(routes.registry, "test") as Doc;
    const stricter: string[] = [];
    let checked = 0;
    for (const route of routeConfigs(routes)) {
      const op = doc.paths[route.path.replace(/:(\w+)/g, "{$1}")]?.[route.method];
      for (const p of op?.parameters ?? []) {
        if (p.schema.type !== "string") continue;
        const part = p.in === "path" ? route.request?.params : route.request?.query;
        const field = (part as z.ZodObject | undefined)?.shape[p.name] as z.ZodType | undefined;
        if (!field) continue;
        checked++;
        for (const v of PROBES) {
          const r = field.safeParse(v);
          // A refinement's own verdict ("custom": a well-formed cursor no page returned) is what the description documents.
          const syntaxRefused = !r.success && r.error.issues.some((i) => i.code !== "custom");
          if (syntaxRefused && publishedAllows(p.schema, v))
            stricter.push(`${route.method.toUpperCase()} ${route.path} ${p.in}.${p.name}=${JSON.stringify(v.slice(0, 20))}`);
        }
      }
    }
    expect(checked).toBeGreaterThan(20);
    expect(stricter).toEqual([]);
  });

  it("GET /v1/runs publishes the cursor's alphabet, so ?cursor=%C3%90 is schema-invalid (issue 29)", () => {
    const doc = buildOpenApiDocument(routes.registry, "test") as Doc;
    const cursor = doc.paths["/v1/runs"]?.get?.parameters?.find((p) => p.name === "cursor");
    expect(cursor?.schema.pattern).toBeDefined();
    expect(publishedAllows(cursor!.schema, "Ð")).toBe(false);
    const commit = doc.paths["/v1/repositories/{repository_id}/{commit_hash}/runs"]?.post?.parameters?.find((p) => p.name === "commit_hash");
    expect(publishedAllows(commit!.schema, "a..b")).toBe(false);
    expect(publishedAllows(commit!.schema, "main")).toBe(true);
  });
});
