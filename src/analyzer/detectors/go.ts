import type { Detector } from "../detector.ts";

// Placeholder until the go detector lands.
export const detectGo: Detector = () => ({ experiments: [], envVars: [] });
