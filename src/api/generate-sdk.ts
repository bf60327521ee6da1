import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { sdkOpenApiDocument } from "./sdk-schema.ts";
import { SDK_SCHEMA_FILE, sdkTypeScriptSchema } from "./sdk-typescript.ts";

// `npm run sdk`: regenerates both SDKs' generated layers from the route
// declarations: the TypeScript types (packages/sdk/src/schema.ts, checked by
// src/api/sdk-typescript.test.ts) and the Python package's operations and models
// (clients/python/codeplane/_api, by its tools/generate.sh; checked by
// test/sdk/python.test.ts).
writeFileSync(SDK_SCHEMA_FILE, await sdkTypeScriptSchema());
process.stdout.write(`wrote ${path.relative(process.cwd(), SDK_SCHEMA_FILE)}\n`);

const scratch = mkdtempSync(path.join(tmpdir(), "cp-sdk-"));
try {
  const doc = path.join(scratch, "openapi.json");
  writeFileSync(doc, JSON.stringify(sdkOpenApiDocument()));
  const generate = new URL("../../clients/python/tools/generate.sh", import.meta.url).pathname;
  execFileSync(generate, [doc], { stdio: ["ignore", "inherit", "inherit"] });
  process.stdout.write("wrote clients/python/codeplane/_api\n");
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
