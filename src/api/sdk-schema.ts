import { documentedRoutes } from "./app.ts";
import { buildOpenApiDocument } from "./openapi.ts";

// The OpenAPI document the SDKs are generated from (packages/sdk,
// clients/python: `npm run sdk`): the one the server publishes at
// /openapi.json, built from the route declarations alone (registering a route
// only stores its declaration, so no service is needed). The version is fixed
// so the generated files change only when the API does.

export function sdkOpenApiDocument(): Record<string, unknown> {
  return buildOpenApiDocument(documentedRoutes().registry, "0.0.0") as Record<string, unknown>;
}
