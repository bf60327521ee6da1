import type { Detector } from "../detector.ts";

// Placeholder until the node detector lands.
export const detectNode: Detector = () => ({ experiments: [], envVars: [] });
