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

/**
 * An object whose fields the schema leaves open (a record, a block), served as
 * `{"type":"object"}`. Unlike `anyObject()` it adds no check: the served type says it all.
 */
export function openObject(): z.ZodUnknown {
  return z.unknown().meta({ type: "object" });
}

/** A list whose items the schema leaves open, served as `{"type":"array"}`, with no check. */
export function openList(): z.ZodUnknown {
  return z.unknown().meta({ type: "array" });
}

/**
 * A result object: its fields typed and required, extra ones allowed (the served schema leaves
 * out `additionalProperties`, which would only add bytes to every tools/list).
 */
export function resultObject<T extends z.ZodRawShape>(shape: T): z.ZodObject<T> {
  return z.object(shape).meta({ additionalProperties: undefined });
}
