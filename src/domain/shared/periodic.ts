/**
 * Runs `pass` every `intervalMs` (the first one interval after the start; the
 * next one interval after the previous pass ends, so passes never overlap)
 * until stopped; `stop()` waits for a pass under way. The timer does not keep
 * the process alive. A pass must catch its own failures: the background jobs
 * that use this log them and try again at the next pass.
 */
export function repeatEvery(intervalMs: number, pass: () => Promise<void>): { stop(): Promise<void> } {
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<void> = Promise.resolve();
  let stopped = false;
  const next = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      running = pass();
      void running.then(next);
    }, intervalMs);
    timer.unref();
  };
  next();
  return {
    stop: async () => {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}
