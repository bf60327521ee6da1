import type { Detector } from "../detector.ts";

// Placeholder until the dotenv detector lands.
export const detectDotenv: Detector = () => ({ experiments: [], envVars: [] });
