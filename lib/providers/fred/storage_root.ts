// Where FRED keeps its projects, apart so that the spec (start-up: the storage upkeep) and the
// provider (its storage) name the same folder without importing each other.
import * as nodePath from "node:path";
import type { FredSettings } from "./settings.ts";

/**
 * The storage root: FRED_STORAGE_DIR when set, else `<per-user data folder>/fred`, not
 * `./fred-data` in the working directory: a desktop client may start the server in any folder, even `/`.
 */
export function storageRoot(settings: Pick<FredSettings, "storage_dir">, dataDir: string): string {
  return settings.storage_dir !== "" ? settings.storage_dir : nodePath.join(dataDir, "fred");
}
