import type { Detector } from "../detector.ts";

// Placeholder until the notebook detector lands.
export const detectNotebook: Detector = () => ({ experiments: [], envVars: [] });
