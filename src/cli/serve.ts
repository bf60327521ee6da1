import { startIdleMemoryRelease } from "../idle-memory-release.ts";
import { startService } from "../service.ts";
import type { CommandGroup } from "./command.ts";

/** How long a stopped service may take to exit by itself. */
const LINGER_MS = 5000;

/** codeplane serve: the service until SIGTERM or SIGINT, then a graceful stop. */
export const run: CommandGroup = async ({ config, logger }) => {
  const service = await startService(config, logger);
  const memoryRelease = startIdleMemoryRelease({ idleSeconds: config.idleMemoryReleaseSeconds, logger });
  await new Promise<void>((resolve) => {
    const stop = (signal: string) => {
      logger.info({ signal }, "shutting down");
      memoryRelease?.stop();
      service.close().then(resolve, (err: unknown) => {
        logger.error({ err }, "error during shutdown");
        resolve();
      });
    };
    process.once("SIGTERM", () => stop("SIGTERM"));
    process.once("SIGINT", () => stop("SIGINT"));
  });
  logger.info("stopped");
  // Everything this process started has been stopped; whatever still holds
  // the event loop open is a leak (say, a watch the Kubernetes client began
  // again while it was being stopped), and a process that never exits holds
  // a terminal, a test or a rollout until something kills it. Say what it
  // was, then exit.
  setTimeout(() => {
    logger.warn({ resources: process.getActiveResourcesInfo() }, `still running ${LINGER_MS / 1000} s after stopping: exiting anyway`);
    process.exit(0);
  }, LINGER_MS).unref();
  return 0;
};
