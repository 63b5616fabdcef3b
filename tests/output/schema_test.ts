import assert from "node:assert/strict";
import { z } from "zod";
import { anyObject, nullableNumber } from "../../lib/output/schema.ts";

Deno.test("anyObject() and nullableNumber() serve one short type and check values", () => {
  const schema = z.object({ a: anyObject(), n: nullableNumber() });
  const json = z.toJSONSchema(schema, { io: "output" }) as { properties: Record<string, unknown> };
  assert.deepEqual(json.properties["a"], { type: "object" });
  assert.deepEqual(json.properties["n"], { type: ["number", "null"] });
  assert.equal(schema.safeParse({ a: { x: 1 }, n: null }).success, true);
  assert.equal(schema.safeParse({ a: { x: 1 }, n: 3 }).success, true);
  for (const bad of [{ a: [], n: 1 }, { a: null, n: 1 }, { a: {}, n: "1" }]) {
    assert.equal(schema.safeParse(bad).success, false, JSON.stringify(bad));
  }
});
