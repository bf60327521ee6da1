import { stringify } from "yaml";
import { CRD_FILES } from "./definition.ts";

const HEADER = "# Generated from src/resources by `npm run crds`. Do not edit by hand.\n";

export function renderCrds(): Record<string, string> {
  return Object.fromEntries(Object.entries(CRD_FILES).map(([file, build]) => [file, HEADER + stringify(build(), { lineWidth: 0 })]));
}
