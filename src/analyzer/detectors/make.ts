import type { Detector } from "../detector.ts";

// Placeholder until the make detector lands.
export const detectMake: Detector = () => ({ experiments: [], envVars: [] });
