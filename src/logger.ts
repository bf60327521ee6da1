import { pino, type Logger } from "pino";

// The one root logger. Everything else takes a child of it, so a deployment can
// tune level and redaction in one place. Secret-bearing fields are redacted by
// path as a second line of defence: code must not log them in the first place.
export const REDACT_PATHS = [
  "req.headers.authorization",
  "req.headers.cookie",
  "headers.authorization",
  "*.password",
  "*.secret",
  "*.token",
  "*.key",
  "*.value",
  "*.client_secret",
  "*.access_token",
  "*.refresh_token",
];

export function createRootLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: "codeplane" },
      redact: { paths: REDACT_PATHS, censor: "[redacted]" },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    destination,
  );
}

export type { Logger };
