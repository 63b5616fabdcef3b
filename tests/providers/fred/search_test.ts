import assert from "node:assert/strict";
import { isoTime } from "../../../lib/providers/fred/search.ts";

Deno.test("isoTime() writes FRED's last_updated as ISO 8601 and leaves out what it cannot read", () => {
  assert.equal(isoTime("2013-07-31 09:26:16-05"), "2013-07-31T09:26:16-05:00");
  assert.equal(isoTime("2024-05-03 07:51:02+05:30"), "2024-05-03T07:51:02+05:30");
  assert.equal(isoTime("2013-07-31"), "2013-07-31");
  assert.equal(isoTime("last Tuesday"), undefined);
  assert.equal(isoTime(undefined), undefined);
});
