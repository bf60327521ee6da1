import type { Detector } from "../detector.ts";
import { detectDotenv } from "./dotenv/detector.ts";
import { detectGo } from "./go/detector.ts";
import { detectMake } from "./make/detector.ts";
import { detectNode } from "./node/detector.ts";
import { detectNotebook } from "./notebook/detector.ts";
import { detectPython } from "./python/detector.ts";
import { detectShell } from "./shell/detector.ts";

/** Every detector, in the order their experiments are listed. */
export const DETECTORS: readonly { name: string; detect: Detector }[] = [
  { name: "python", detect: detectPython },
  { name: "notebook", detect: detectNotebook },
  { name: "node", detect: detectNode },
  { name: "go", detect: detectGo },
  { name: "make", detect: detectMake },
  { name: "shell", detect: detectShell },
  { name: "dotenv", detect: detectDotenv },
];
