// Takeover recipes are signed: a job's `resume` is what another replica runs with the operator's
// upstream keys and writes into its owner's folder, so a record forged by whoever can write to
// the shared store (Redis) must not be run. The replicas already share one secret,
// `server.request_state_key` (MCP_REQUEST_STATE_KEY); the signing key is derived from it for this
// use alone, so neither key reveals the other. Without it nothing is derived (the Redis URL or
// password would be guessable by anyone who can write to Redis): recipes are then unsigned and
// resumed from their checked fields only (docs/SECURITY.md). Shared session records are signed
// the same way under a key of their own (lib/redis/session_store.ts).
import type { JobRecord } from "./job_types.ts";

const encoder = new TextEncoder();

/**
 * The labels signing keys are derived under (HMAC-SHA-256 of the label, keyed by the shared
 * secret): one per use, so a signature made for one use never holds for another.
 */
const LABELS = {
  recipe: "opendata-mcp job takeover recipe v1",
  session: "opendata-mcp shared session record v1",
} as const;

/** The HMAC-SHA-256 key of takeover recipes, derived from the replicas' shared secret. */
export async function recipeSigningKey(sharedSecret: string): Promise<CryptoKey> {
  return await derivedKey(sharedSecret, LABELS.recipe);
}

/** The HMAC-SHA-256 key of shared session records, derived from the replicas' shared secret. */
export async function sessionSigningKey(sharedSecret: string): Promise<CryptoKey> {
  return await derivedKey(sharedSecret, LABELS.session);
}

async function derivedKey(sharedSecret: string, label: string): Promise<CryptoKey> {
  const outer = await crypto.subtle.importKey(
    "raw",
    encoder.encode(sharedSecret),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  const derived = await crypto.subtle.sign("HMAC", outer, encoder.encode(label));
  return await crypto.subtle.importKey("raw", derived, { name: "HMAC", hash: "SHA-256" }, false, [
    "sign",
    "verify",
  ]);
}

/** JSON with object keys sorted at every level: the same value always gives the same text. */
export function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

/** What is signed: the job's id, owner, client and recipe (a recipe moved to another job or owner fails). */
function signedText(record: JobRecord): string {
  return canonical({
    id: record.id,
    owner: record.owner,
    client: record.client ?? null,
    resume: record.resume ?? null,
  });
}

function hex(bytes: ArrayBuffer): string {
  return [...new Uint8Array(bytes)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** The HMAC-SHA-256 signature of `text` (hex). */
export async function signText(key: CryptoKey, text: string): Promise<string> {
  return hex(await crypto.subtle.sign("HMAC", key, encoder.encode(text)));
}

/** The record's recipe signature (hex). */
export async function signRecipe(key: CryptoKey, record: JobRecord): Promise<string> {
  return await signText(key, signedText(record));
}

/** Whether the record carries a valid signature of its recipe (compared in constant time). */
export async function recipeSignatureValid(key: CryptoKey, record: JobRecord): Promise<boolean> {
  return await textSignatureValid(key, record.resumeSig, signedText(record));
}

/**
 * What a checkpoint's signature covers: the checkpoint with everything the recipe's covers, so
 * a checkpoint moved to another job, owner or recipe fails. Labelled apart from the recipe's text.
 */
function checkpointText(record: JobRecord): string {
  return `checkpoint ${canonical({ recipe: signedText(record), checkpoint: record.checkpoint ?? null })}`;
}

/** The record's checkpoint signature (hex); see {@linkcode checkpointSignatureValid}. */
export async function signCheckpoint(key: CryptoKey, record: JobRecord): Promise<string> {
  return await signText(key, checkpointText(record));
}

/**
 * Whether the record carries a valid signature of its checkpoint: a resume trusts its byte
 * length and cursor, which whoever can write to the shared store could otherwise forge.
 */
export async function checkpointSignatureValid(key: CryptoKey, record: JobRecord): Promise<boolean> {
  return await textSignatureValid(key, record.checkpointSig, checkpointText(record));
}

/** Whether `sig` is a valid signature of `text` (hex; compared in constant time). */
export async function textSignatureValid(
  key: CryptoKey,
  sig: unknown,
  text: string,
): Promise<boolean> {
  if (typeof sig !== "string") return false;
  if (!/^[0-9a-f]{64}$/.test(sig)) return false;
  const bytes = new Uint8Array(sig.match(/../g)!.map((h) => parseInt(h, 16)));
  return await crypto.subtle.verify("HMAC", key, bytes, encoder.encode(text));
}

/**
 * Signs another message replicas exchange through the shared store with the same key, under
 * `label` (so no message passes for a recipe, a checkpoint or a message of another kind); hex.
 */
export async function signMessage(key: CryptoKey, label: string, value: unknown): Promise<string> {
  return await signText(key, `${label} ${canonical(value)}`);
}

/** Whether `sig` is {@linkcode signMessage}'s signature of `value` under `label`. */
export async function messageSignatureValid(
  key: CryptoKey,
  sig: string | undefined,
  label: string,
  value: unknown,
): Promise<boolean> {
  return await textSignatureValid(key, sig, `${label} ${canonical(value)}`);
}
