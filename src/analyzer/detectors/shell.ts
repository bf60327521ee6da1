import type { Detector } from "../detector.ts";

// Placeholder until the shell detector lands.
export const detectShell: Detector = () => ({ experiments: [], envVars: [] });
