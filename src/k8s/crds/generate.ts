import { writeFileSync } from "node:fs";
import { renderCrds } from "./render.ts";

// `npm run crds`: rewrites crds/ from the zod schemas.
const dir = new URL("../../../crds/", import.meta.url);
for (const [file, text] of Object.entries(renderCrds())) {
  writeFileSync(new URL(file, dir), text);
  process.stdout.write(`wrote crds/${file}\n`);
}
