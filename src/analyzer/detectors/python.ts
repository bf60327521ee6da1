import type { Detector } from "../detector.ts";

// Placeholder until the python detector lands.
export const detectPython: Detector = () => ({ experiments: [], envVars: [] });
