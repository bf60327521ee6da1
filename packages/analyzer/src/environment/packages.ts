import { requirementName } from "../summary-manifests.ts";

// The packages worth an image of their own: large (hundreds of MB to GB with
// their CUDA libraries), slow to install, and what GPU images ship already.
// A catalog image that lists one provides it, so the install finds it in the
// image's site-packages (the venv sees them) and downloads nothing big. The
// list is short on purpose: only what images are built around.
export const NOTABLE_PACKAGES: ReadonlySet<string> = new Set([
  "torch",
  "torchvision",
  "torchaudio",
  "tensorflow",
  "tensorflow-cpu",
  "tensorflow-gpu",
  "jax",
  "jaxlib",
  "paddlepaddle",
  "paddlepaddle-gpu",
  "mxnet",
  "cupy",
  "xformers",
  "onnxruntime-gpu",
]);

/** The notable ones among `names` (any spelling: "Torch", "jax[cuda12]>=0.4"), as PEP 503 names, sorted and unique. */
export function notablePackages(names: readonly string[]): string[] {
  const out = new Set<string>();
  for (const n of names) {
    const name = requirementName(n);
    if (name && NOTABLE_PACKAGES.has(name)) out.add(name);
  }
  return [...out].sort();
}
