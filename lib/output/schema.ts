// Output-schema pieces that serve in few characters. Clients validate structuredContent against
// a tool's output schema, and every agent pays for its characters on every turn: nested objects
// whose fields the tool description already names are typed loosely, and nullable numbers are a
// type array rather than zod's `anyOf` with ±2^53 bounds. Built on `z.unknown()` (served as `{}`)
// with a check and the served type as metadata, so they convert without zod's "unrepresentable"
// fallback.
import { z } from "zod";

function isRecord(value: unknown): boolean {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Any JSON object, served as `{"type":"object"}`. */
export function anyObject(): z.ZodType<object> {
  return z.unknown().refine(isRecord, "expected an object").meta({ type: "object" }) as z.ZodType<object>;
}

/** A number or null, served as `{"type":["number","null"]}`. */
export function nullableNumber(): z.ZodType<number | null> {
  return z.unknown().refine((v) => v === null || typeof v === "number", "expected a number or null")
    .meta({ type: ["number", "null"] }) as z.ZodType<number | null>;
}
