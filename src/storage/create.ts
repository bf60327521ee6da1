import type { Config } from "../config.ts";
import type { Logger } from "../logger.ts";
import { DirectoryStore } from "./directory-store.ts";
import type { ObjectStore } from "./object-store.ts";
import { S3Store } from "./s3-store.ts";

/**
 * The object store the settings name, checked before it is handed out: a
 * directory that cannot be written or a bucket that cannot be reached stops
 * the start with ObjectStoreUnavailableError, one line naming the store and
 * what failed, rather than failing the first environment build much later.
 */
export async function createObjectStore(config: Pick<Config, "objectStore">, logger: Logger): Promise<ObjectStore> {
  const settings = config.objectStore;
  const store = settings.kind === "s3" ? new S3Store(settings.s3) : new DirectoryStore(settings.dir);
  await store.check();
  logger.info({ objectStore: store.kind, location: store.location }, "object store ready");
  return store;
}
