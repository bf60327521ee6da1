import type { Detector } from "../detector.ts";
import { detectDotenv } from "./dotenv.ts";
import { detectGo } from "./go.ts";
import { detectMake } from "./make.ts";
import { detectNode } from "./node.ts";
import { detectNotebook } from "./notebook.ts";
import { detectPython } from "./python.ts";
import { detectShell } from "./shell.ts";

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
