import { writeFileSync } from "node:fs";
import { renderCrds } from "./render.ts";

// `npm run crds`: rewrites crds/ and the Helm chart's copy (files/crds/, which its
// templates/crds.yaml renders) from the zod schemas.
for (const dir of ["crds/", "charts/codeplane/files/crds/"]) {
  for (const [file, text] of Object.entries(renderCrds())) {
    writeFileSync(new URL(`../../${dir}${file}`, import.meta.url), text);
    process.stdout.write(`wrote ${dir}${file}\n`);
  }
}
