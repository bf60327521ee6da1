// @codeplane/analyzer's public entry for the service: the analyzer's result
// format (zod schemas and their types), which the service validates, stores
// and serves. It loads no parser: the analysis itself runs in analysis pods,
// through the CLI (@codeplane/analyzer/cli).
export * from "./model.ts";
