import { rename, rm } from "node:fs/promises";

/**
 * Removes a folder so that nobody can see it half-deleted: it is renamed to
 * `trash` first (atomic), then deleted. A folder already gone is no error.
 */
export async function removeDirAtomically(dir: string, trash: string): Promise<void> {
  try {
    await rename(dir, trash);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return;
    throw err;
  }
  await rm(trash, { recursive: true, force: true });
}
