// The hash an owner (an HTTP session or principal) is stored and counted under, shared by the
// project storage, the jobs and the HTTP transport; the raw id is never written anywhere.

import process from "node:process";

/** The hash an owner is stored under (folder name and `.project.json`): never the raw id. */
export function ownerHash(owner: string): string {
  let hash = ownerHashes.get(owner);
  if (hash === undefined) {
    hash = nodeCrypto().createHash("sha256").update(owner).digest("hex").slice(0, 32);
    // Few owners call often (a session's calls share one): each is hashed once, not per call.
    if (ownerHashes.size >= OWNER_HASHES_KEPT) ownerHashes.clear();
    ownerHashes.set(owner, hash);
  }
  return hash;
}

/** Owners whose hashes are remembered at most; past this the memory starts afresh. */
const OWNER_HASHES_KEPT = 4096;
const ownerHashes = new Map<string, string>();

/**
 * `node:crypto`, loaded on the first owner's hash (over HTTP) rather than with this module: a
 * static import adds about 5 ms to every start, stdio included, which never hashes an owner.
 */
let nodeCryptoModule: typeof import("node:crypto") | undefined;
function nodeCrypto(): typeof import("node:crypto") {
  return nodeCryptoModule ??= process.getBuiltinModule("node:crypto") as typeof import("node:crypto");
}
