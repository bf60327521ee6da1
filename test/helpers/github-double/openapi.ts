import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import * as ajvFormats from "ajv-formats";

// GitHub's own descriptions of its REST API (@octokit/openapi) and of its
// webhook payloads (@octokit/openapi-webhooks), turned into validators.
//
// The REST description is OpenAPI 3.0 (11 MB of JSON for GHES): it is parsed
// once per process, on first use, and only the schemas the double's operations
// reach are converted to JSON Schema and compiled, each once, when an
// operation is first served. OpenAPI 3.0's `nullable` becomes a "null" type,
// references to components become references between ajv schemas, and
// annotations (description, example) are dropped before ajv sees them.

const require = createRequire(import.meta.url);

/** The GitHub Enterprise Server release the double imitates. */
export const GHES_VERSION = "3.19";
const REST_FILE = `@octokit/openapi/generated/ghes-${GHES_VERSION}.json`;
const WEBHOOKS_FILE = `@octokit/openapi-webhooks/generated/ghes-${GHES_VERSION}.json`;

type Json = Record<string, any>;

interface Description {
  doc: Json;
  /** Schema ids already given to ajv, by component name. */
  registered: Set<string>;
  base: string;
}

let ajvInstance: Ajv | undefined;
let rest: Description | undefined;
let hooks: Description | undefined;
export const timings = { restLoadMs: 0, webhooksLoadMs: 0, compileMs: 0 };

function ajv(): Ajv {
  if (ajvInstance) return ajvInstance;
  const a = new Ajv({ strict: false, allErrors: true, logger: false, validateSchema: false });
  const addFormats = ((ajvFormats as any).default ?? ajvFormats) as (ajv: Ajv) => Ajv;
  addFormats(a);
  // Formats GitHub uses that ajv-formats does not define: not checked.
  for (const f of ["ssh-key", "ssh-key fingerprint", "ip/cidr", "repo.nwo", "timestamp", "binary"]) a.addFormat(f, true);
  ajvInstance = a;
  return a;
}

function load(file: string, base: string, which: "restLoadMs" | "webhooksLoadMs"): Description {
  const t0 = performance.now();
  const doc = JSON.parse(readFileSync(require.resolve(file), "utf8")) as Json;
  timings[which] = Math.round(performance.now() - t0);
  return { doc, registered: new Set(), base };
}

/**
 * Mistakes in GitHub's description that real GitHub contradicts, corrected
 * here (each narrowly, by path) so that the double can answer as GitHub does
 * without a standing violation. Keep this list short and explained.
 */
export const ERRATA: { where: string; why: string; fix(doc: Json): void }[] = [
  {
    where: "GET /app/installations 200: items.account",
    why: "declared as allOf [Simple User, Enterprise] (an account that is both at once); the single-installation operation and GitHub's answers make it one or the other (anyOf)",
    fix(doc) {
      const account = doc.paths["/app/installations"]?.get?.responses?.["200"]?.content?.["application/json"]?.schema?.items?.properties?.account;
      if (account?.allOf && !account.anyOf) {
        account.anyOf = account.allOf;
        delete account.allOf;
      }
    },
  },
];

export function restDescription(): Description {
  if (!rest) {
    rest = load(REST_FILE, "https://double.invalid/rest/", "restLoadMs");
    for (const e of ERRATA) e.fix(rest.doc);
  }
  return rest;
}

function webhooksDescription(): Description {
  return (hooks ??= load(WEBHOOKS_FILE, "https://double.invalid/webhooks/", "webhooksLoadMs"));
}

const ANNOTATIONS = new Set([
  "description",
  "example",
  "examples",
  "externalDocs",
  "discriminator",
  "xml",
  "title",
  "x-github",
  "deprecated",
  "readOnly",
  "writeOnly",
]);

/** One OpenAPI 3.0 schema object as JSON Schema (draft-07 as ajv reads it). */
function convert(d: Description, schema: unknown): unknown {
  if (typeof schema !== "object" || schema === null) return schema;
  if (Array.isArray(schema)) return schema.map((s) => convert(d, s));
  const s = schema as Json;
  if (typeof s.$ref === "string") return { $ref: refTo(d, s.$ref) };
  const out: Json = {};
  for (const [k, v] of Object.entries(s)) {
    if (ANNOTATIONS.has(k) || k === "nullable" || k.startsWith("x-")) continue;
    if (k === "properties" || k === "patternProperties") {
      out[k] = Object.fromEntries(Object.entries(v as Json).map(([name, sub]) => [name, convert(d, sub)]));
    } else if (["items", "additionalProperties", "not", "allOf", "anyOf", "oneOf"].includes(k)) {
      out[k] = convert(d, v);
    } else {
      out[k] = v;
    }
  }
  if (s.nullable === true) {
    if (typeof out.type === "string" && !out.enum) return { ...out, type: [out.type, "null"] };
    if (typeof out.type === "string" && Array.isArray(out.enum)) return { ...out, type: [out.type, "null"], enum: [...out.enum, null] };
    return { anyOf: [out, { type: "null" }] };
  }
  return out;
}

/** Turns `#/components/schemas/x` into the id of an ajv schema, registering it first. */
function refTo(d: Description, ref: string): string {
  const m = /^#\/components\/schemas\/([^/]+)$/.exec(ref);
  if (!m) throw new Error(`unsupported $ref ${ref}`);
  const name = m[1]!;
  const id = d.base + encodeURIComponent(name);
  if (!d.registered.has(name)) {
    d.registered.add(name);
    const target = d.doc.components.schemas[name];
    if (!target) throw new Error(`unknown schema ${name}`);
    ajv().addSchema({ ...(convert(d, target) as Json), $id: id });
  }
  return id;
}

/** Follows a `$ref` to a component of any kind (parameters, responses, ...). */
export function deref<T = Json>(d: Description, o: any): T {
  let cur = o;
  for (let i = 0; cur && typeof cur.$ref === "string" && i < 10; i++) {
    const parts = (cur.$ref as string).replace(/^#\//, "").split("/");
    cur = parts.reduce((acc: any, p) => acc?.[p.replace(/~1/g, "/").replace(/~0/g, "~")], d.doc);
  }
  return cur as T;
}

function compile(d: Description, schema: unknown): ValidateFunction {
  const t0 = performance.now();
  const v = ajv().compile(convert(d, schema) as Json);
  timings.compileMs += performance.now() - t0;
  return v;
}

export function formatErrors(errors: ErrorObject[] | null | undefined, where: string): string[] {
  return (errors ?? []).map((e) => {
    const at = `${where}${e.instancePath}`;
    const extra =
      e.keyword === "additionalProperties"
        ? ` (${(e.params as any).additionalProperty})`
        : e.keyword === "enum"
          ? ` (${JSON.stringify((e.params as any).allowedValues)})`
          : "";
    return `${at} ${e.message}${extra}`;
  });
}

interface Param {
  name: string;
  in: "path" | "query" | "header" | "cookie";
  required?: boolean;
  schema: Json;
}

/** Coerces a path or query value (always a string on the wire) the way its schema wants it. */
function coerce(value: string, schema: Json): unknown {
  const type = schema.type;
  if (type === "integer" && /^-?\d+$/.test(value)) return Number(value);
  if (type === "number" && value.trim() !== "" && !Number.isNaN(Number(value))) return Number(value);
  if (type === "boolean" && (value === "true" || value === "false")) return value === "true";
  if (type === "array") return value.split(",");
  return value;
}

export interface RequestParts {
  pathParams: Record<string, string>;
  query: URLSearchParams;
  contentType: string | undefined;
  /** undefined when there was no body; the parsed JSON otherwise. */
  body: unknown;
}

export interface Operation {
  operationId: string;
  docsUrl: string;
  /** Problems with the request, in words; empty when it matches the description. */
  checkRequest(r: RequestParts): string[];
  /** Problems with the response; generic statuses (400, 401, 403, 404, 413, 422, 429, 5xx) are allowed for every operation. */
  checkResponse(status: number, headers: Record<string, string>, body: unknown): string[];
}

const operations = new Map<string, Operation>();
// Statuses GitHub can answer on any operation, whether or not its description lists them
// (bad JSON, credentials, permissions, a missing resource, validation, size, rate limits, outages).
const GENERIC = new Set([400, 401, 403, 404, 413, 422, 429, 500, 502, 503, 504]);

/** The operation `method path` of the REST description (path as in the description, e.g. `/repos/{owner}/{repo}`). */
export function operation(method: string, path: string): Operation {
  const key = `${method.toLowerCase()} ${path}`;
  const cached = operations.get(key);
  if (cached) return cached;
  const d = restDescription();
  const op = d.doc.paths[path]?.[method.toLowerCase()];
  if (!op) throw new Error(`no operation ${key} in GitHub's description`);
  const params: Param[] = [...(d.doc.paths[path].parameters ?? []), ...(op.parameters ?? [])].map((p: unknown) => deref<Param>(d, p));
  const paramValidators = new Map(params.map((p) => [`${p.in}:${p.name}`, compile(d, p.schema)]));
  const body = op.requestBody ? deref(d, op.requestBody) : undefined;
  const bodySchema = body?.content?.["application/json"]?.schema;
  const bodyValidator = bodySchema ? compile(d, bodySchema) : undefined;
  const responseValidators = new Map<number, ValidateFunction | null>();
  const responseFor = (status: number): { validator: ValidateFunction | null; documented: boolean; headers: string[] } | undefined => {
    const raw = op.responses[String(status)] ?? (GENERIC.has(status) ? genericResponse(status) : undefined);
    if (!raw) return undefined;
    const resp = deref(d, raw);
    if (!responseValidators.has(status)) {
      const schema = resp.content?.["application/json"]?.schema;
      responseValidators.set(status, schema ? compile(d, schema) : null);
    }
    return { validator: responseValidators.get(status)!, documented: String(status) in op.responses, headers: Object.keys(resp.headers ?? {}) };
  };

  const result: Operation = {
    operationId: op.operationId,
    docsUrl: op.externalDocs?.url ?? `https://docs.github.com/enterprise-server@${GHES_VERSION}/rest`,
    checkRequest(r) {
      const problems: string[] = [];
      for (const p of params) {
        if (p.in === "header" || p.in === "cookie") continue;
        const raw = p.in === "path" ? r.pathParams[p.name] : (r.query.get(p.name) ?? undefined);
        if (raw === undefined) {
          if (p.required) problems.push(`${p.in} parameter ${p.name} is required`);
          continue;
        }
        const v = paramValidators.get(`${p.in}:${p.name}`)!;
        if (!v(coerce(raw, p.schema))) problems.push(...formatErrors(v.errors, `${p.in} parameter ${p.name}`));
      }
      if (r.body === undefined) {
        if (body?.required) problems.push("a request body is required");
      } else if (!bodyValidator) {
        // GitHub ignores a body it does not expect.
      } else if (!bodyValidator(r.body)) {
        problems.push(...formatErrors(bodyValidator.errors, "body"));
      }
      return problems;
    },
    checkResponse(status, headers, resBody) {
      const problems: string[] = [];
      const spec = responseFor(status);
      if (!spec) return [`status ${status} is not a documented response of ${op.operationId}`];
      if (spec.validator) {
        if (!(headers["content-type"] ?? "").startsWith("application/json")) problems.push(`content-type ${headers["content-type"]} is not application/json`);
        if (!spec.validator(resBody)) problems.push(...formatErrors(spec.validator.errors, `body`));
      }
      const link = headers["link"];
      if (link !== undefined) {
        if (!spec.headers.includes("Link") && spec.documented) problems.push("Link header on a response that does not document it");
        if (!/^<[^>]+>; rel="(next|prev|first|last)"(, <[^>]+>; rel="(next|prev|first|last)")*$/.test(link)) problems.push(`malformed Link header: ${link}`);
      }
      return problems;
    },
  };
  operations.set(key, result);
  return result;
}

function genericResponse(status: number): Json {
  const schema = status === 422 ? "validation-error" : "basic-error";
  return { content: { "application/json": { schema: { $ref: `#/components/schemas/${schema}` } } } };
}

let allPaths: { method: string; path: string; re: RegExp }[] | undefined;

/** The operation of GitHub's description that `method pathname` (below /api/v3) would reach, if any. */
export function findDescribedOperation(method: string, pathname: string): { path: string; operationId: string } | undefined {
  const d = restDescription();
  allPaths ??= Object.entries(d.doc.paths as Json).flatMap(([path, item]) =>
    Object.keys(item)
      .filter((m) => ["get", "put", "post", "patch", "delete", "head"].includes(m))
      .map((m) => ({
        method: m,
        path,
        re: new RegExp("^" + path.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\{[^}]+\}/g, "[^/]+") + "$"),
      })),
  );
  const hit = allPaths.find((p) => p.method === method.toLowerCase() && p.re.test(pathname));
  return hit ? { path: hit.path, operationId: d.doc.paths[hit.path][hit.method].operationId } : undefined;
}

const webhookValidators = new Map<string, ValidateFunction>();

/**
 * The validator of a webhook payload, by the description's key: `push`,
 * `ping`, `installation-created`, `pull-request-synchronize`, ...
 */
export function webhookValidator(key: string): ValidateFunction {
  const cached = webhookValidators.get(key);
  if (cached) return cached;
  const d = webhooksDescription();
  const hook = d.doc.webhooks[key];
  if (!hook) throw new Error(`GitHub's webhook description has no ${key}`);
  const schema = hook.post.requestBody.content["application/json"].schema;
  const v = compile(d, schema);
  webhookValidators.set(key, v);
  return v;
}

export function webhookKeys(): string[] {
  return Object.keys(webhooksDescription().doc.webhooks);
}
