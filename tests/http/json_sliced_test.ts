// The sliced JSON decode of big upstream bodies (lib/http/json_sliced.ts, decode.ts): the same
// values and errors as JSON.parse and the whole-body path, and turns of the event loop between
// slices (docs/SECURITY.md, "Work budgets").
import assert from "node:assert/strict";
import { UpstreamError } from "../../lib/errors.ts";
import { decodeJson, type RawResponse, SLICED_DECODE_BYTES } from "../../lib/http/decode.ts";
import { JsonDepthScan, jsonTooDeepAt, MAX_JSON_DEPTH } from "../../lib/http/json_depth.ts";
import { JsonSliceError, Pace, parseJsonSliced } from "../../lib/http/json_sliced.ts";

const UPSTREAM = { provider: "test", upstreamName: "Test API" };
const PAD = " ".repeat(SLICED_DECODE_BYTES + 10);
/** More characters than one step of a string or a whitespace run reads. */
const LONG = 70_000;

const VALID: string[] = [
  "0",
  "-0",
  "[-0, 0.0, -0.0e5]",
  "1e400",
  "-1e400",
  "1e-400",
  "1.7976931348623157e308",
  "5e-324",
  "2.4703282292062328e-324",
  "0.1",
  "123456789012345678901234567890",
  "9007199254740993",
  "1E+2",
  "1e-2",
  "2.5E-0",
  "0.30000000000000004",
  `${"9".repeat(400)}.${"9".repeat(400)}e-300`,
  "true",
  "false",
  "null",
  '""',
  '"a"',
  String.raw`"\" \\ \/ \b \f \n \r \t"`,
  String.raw`"\u0000\u001f\u00e9\u20AC\uD83D\uDE00"`,
  String.raw`"\uD800 lone \uDC00 and \uDBFF"`,
  '"raw \u{1F600} é \ud800 lone"',
  '"[[[[{{{{ brackets in a string"',
  String.raw`"a \"[\" and \\"`,
  "[]",
  "{}",
  '[[],{},[[]],{"a":{}}]',
  '{"a":1,"a":2}',
  '{"a":1,"b":2,"a":3}',
  '{"__proto__":{"x":1},"y":2}',
  '{"__proto__":null}',
  '{"constructor":1,"toString":2,"hasOwnProperty":3}',
  '{"b":1,"2":2,"1":3,"a":4,"-1":5,"01":6}',
  " \t\n\r[ 1 , 2 ,\n\t3 ] \r\n",
  '\uFEFF{"bom":true}',
  `"${"x".repeat(LONG)}"`,
  `"${"x".repeat(LONG - 1)}\\n${"y".repeat(LONG)}"`,
  `"${"x".repeat(LONG * 2)}\\u00e9"`,
  `[${" ".repeat(LONG * 2)}1${" ".repeat(LONG)}]`,
  `{"${"k".repeat(LONG)}":1}`,
  // Escapes at and across the end of one step's 65,536 characters, a surrogate pair split by it.
  `"${"x".repeat(65_530)}\\uD83D\\uDE00${"\\u00e9\\n".repeat(20_000)}"`,
  `"${"x".repeat(65_533)}\\uD83D\\uDE00\\"${"y".repeat(LONG)}"`,
  `"${"x".repeat(65_534)}\\\\${"\\t".repeat(LONG)}"`,
  `${"[".repeat(MAX_JSON_DEPTH)}${"]".repeat(MAX_JSON_DEPTH)}`,
  JSON.stringify({
    type: "Feature",
    geometry: { type: "Polygon", coordinates: [[[10.5, 59.9], [10.6, 59.8]]] },
  }),
];

const INVALID: string[] = [
  "",
  " ",
  "\uFEFF",
  "\uFEFF\uFEFF1",
  " \uFEFF1",
  "[1,]",
  '{"a":1,}',
  "[1 2]",
  '{"a" 1}',
  '{"a":}',
  "{a:1}",
  "{1:1}",
  "'a'",
  '"a',
  String.raw`"\x"`,
  String.raw`"\u12"`,
  '"tab\tin a string"',
  '"newline\nin a string"',
  "01",
  "-01",
  "1.",
  ".5",
  "+1",
  "-",
  "1e",
  "1e+",
  "0x10",
  "NaN",
  "Infinity",
  "-Infinity",
  "tru",
  "nul",
  "True",
  "[]]",
  "[] x",
  "{}}",
  "[",
  "{",
  '{"a":1',
  "[1,",
  "]",
  "1 2",
  "\u00a01",
  `"${"x".repeat(LONG * 2)}`,
  `"${"x".repeat(LONG)}\\`,
];

async function parse(text: string): Promise<unknown> {
  return await parseJsonSliced(text, new Pace(() => {}, 0));
}

function raw(body: string, contentType = "application/json"): RawResponse {
  return { status: 200, contentType, body: new TextEncoder().encode(body), url: "https://example.test/x" };
}

async function decodeError(r: RawResponse): Promise<UpstreamError> {
  try {
    await decodeJson(r, UPSTREAM);
  } catch (e) {
    assert.ok(e instanceof UpstreamError, String(e));
    return e;
  }
  return assert.fail("expected a DECODE_ERROR");
}

Deno.test("parseJsonSliced() equals JSON.parse on tricky strings, numbers, keys and whitespace", async () => {
  for (const text of VALID) {
    const expected = JSON.parse(text.replace(/^\uFEFF/, ""));
    const got = await parse(text);
    assert.deepEqual(got, expected, text.slice(0, 80));
    assert.equal(JSON.stringify(got), JSON.stringify(expected), `order of ${text.slice(0, 80)}`);
    if (got !== null && typeof got === "object") {
      assert.equal(Object.getPrototypeOf(got), Object.getPrototypeOf(expected));
    }
  }
  const proto = await parse('{"__proto__":{"x":1}}') as Record<string, unknown>;
  assert.equal(Object.getPrototypeOf(proto), Object.prototype);
  assert.deepEqual(Object.keys(proto), ["__proto__"]);
});

Deno.test("parseJsonSliced() refuses what JSON.parse refuses", async () => {
  for (const text of INVALID) {
    assert.throws(
      () => JSON.parse(text.replace(/^\uFEFF/, "")),
      SyntaxError,
      `JSON.parse took ${text.slice(0, 40)}`,
    );
    await assert.rejects(
      parse(text),
      (e) => e instanceof JsonSliceError && e.kind === "syntax",
      text.slice(0, 40),
    );
  }
});

Deno.test("parseJsonSliced() agrees with JSON.parse on thousands of mutated bodies", async () => {
  let seed = 42;
  const random = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  const alphabet = [...'{}[],:"\\ -+.eE0159tfnul\tx\u00e9\ud800', "\\u", "\\n", "1e5", "-0"];
  let valid = 0;
  for (let round = 0; round < 4000; round++) {
    let text = VALID[random(VALID.length - 6)]!;
    for (let k = random(3) + 1; k > 0; k--) {
      const at = random(text.length + 1);
      const cut = random(3);
      text = text.slice(0, at) + (random(2) ? alphabet[random(alphabet.length)] : "") + text.slice(at + cut);
    }
    let expected: unknown;
    try {
      expected = { value: JSON.parse(text.replace(/^\uFEFF/, "")) };
    } catch {
      expected = "refused";
    }
    const got = await parse(text).then((value) => ({ value }), (e) => {
      assert.ok(e instanceof JsonSliceError, String(e));
      return "refused";
    });
    assert.deepEqual(got, expected, JSON.stringify(text));
    if (expected !== "refused") valid++;
  }
  assert.ok(valid > 200, `${valid} valid mutants`);
});

Deno.test("parseJsonSliced() refuses nesting past the limit at the offset jsonTooDeepAt gives", async () => {
  const cases = [
    "[".repeat(MAX_JSON_DEPTH + 1),
    `{"a":"[[[",${'"b":{'.repeat(MAX_JSON_DEPTH + 3)}`,
    ` ${'[{"k\\"[":'.repeat(40)}`,
  ];
  for (const text of cases) {
    const at = jsonTooDeepAt(text);
    assert.ok(at > 0);
    await assert.rejects(
      parse(text),
      (e) => e instanceof JsonSliceError && e.kind === "deep" && e.offset === at,
    );
  }
});

Deno.test("JsonDepthScan finds the same offset whatever the pieces, a backslash at a piece's end included", () => {
  const text = `["\\"[[[",${"[".repeat(MAX_JSON_DEPTH)}"\\\\"]`;
  const whole = jsonTooDeepAt(text);
  assert.ok(whole > 0);
  for (const piece of [1, 2, 3, 7]) {
    const scan = new JsonDepthScan();
    let found = -1;
    for (let at = 0; at < text.length && found < 0; at += piece) {
      found = scan.scan(text, at, Math.min(text.length, at + piece));
    }
    assert.equal(found, whole, `pieces of ${piece}`);
  }
});

/** What decodeJson makes of a body: its value, or its error's type and message. */
async function outcome(r: RawResponse): Promise<unknown> {
  try {
    return { value: await decodeJson(r, UPSTREAM) };
  } catch (e) {
    assert.ok(e instanceof UpstreamError, String(e));
    return { error: e.errorType, message: e.message };
  }
}

Deno.test("decodeJson() gives a big body the value and the errors it gives a small one", async () => {
  const bodies = [
    ...VALID,
    ...INVALID,
    "[".repeat(MAX_JSON_DEPTH + 1),
    `x ${"[".repeat(MAX_JSON_DEPTH + 1)}`,
    `[1,] ${"{".repeat(MAX_JSON_DEPTH + 2)}`,
    "<!DOCTYPE html><p>down</p>",
    "\n <html>",
  ];
  let errors = 0;
  for (const text of bodies) {
    const small = await outcome(raw(text));
    assert.deepEqual(await outcome(raw(text + PAD)), small, text.slice(0, 40));
    if ("error" in (small as object)) errors++;
  }
  assert.ok(errors > INVALID.length, `${errors} errors`);
  const html = await decodeError(raw(`{"a":1}${PAD}`, "text/html; charset=utf-8"));
  assert.match(html.message, /returned an HTML page instead of JSON \(HTTP 200\)/);
  const empty = await decodeError(raw(`${PAD}\u00a0\u2028${PAD}`));
  assert.match(empty.message, /returned an empty body where JSON was expected/);
  const cut = await decodeError(raw(`[${'"a",'.repeat(300_000)}`));
  assert.match(cut.message, /not valid JSON \(it may have been cut off\)/);
});

/** A 10 MB body of the shape a hostile GeoJSON feature has. */
function bigBody(): string {
  const ring = Array.from({ length: 500_000 }, (_, i) => [10 + i / 1e6, 59 + i / 1e7]);
  return JSON.stringify({ type: "Feature", geometry: { type: "Polygon", coordinates: [ring] } });
}

Deno.test("decodeJson() gives the event loop turns while it decodes a 10 MB body", async () => {
  const body = raw(bigBody());
  const order: string[] = [];
  setTimeout(() => order.push("timer"), 0);
  const value = await decodeJson<{ geometry: { coordinates: number[][][] } }>(body, UPSTREAM);
  order.push("decoded");
  assert.deepEqual(order, ["timer", "decoded"]);
  assert.equal(value.geometry.coordinates[0]!.length, 500_000);
});

Deno.test("parseJsonSliced() gives the event loop turns inside one long string or whitespace run", async () => {
  for (
    const text of [
      `"${"ab".repeat(3_000_000)}"`,
      `"${"\\n".repeat(3_000_000)}"`,
      `[${" ".repeat(6_000_000)}]`,
    ]
  ) {
    let turns = 0;
    await parseJsonSliced(text, new Pace(() => turns++, 1));
    assert.ok(turns >= 3, `${turns} turns in ${text.slice(0, 8)}`);
  }
});

Deno.test("decodeJson() stops a big body when the call is cancelled or past its deadline", async () => {
  const body = raw(bigBody());
  const controller = new AbortController();
  setTimeout(() => controller.abort(), 0);
  await assert.rejects(
    decodeJson(body, UPSTREAM, { signal: controller.signal }),
    (e) => e instanceof UpstreamError && e.errorType === "CANCELLED",
  );
  let now = 1_000;
  setTimeout(() => now = 2_000, 0);
  await assert.rejects(
    decodeJson(body, UPSTREAM, { deadline: 1_500, now: () => now }),
    (e) =>
      e instanceof UpstreamError && e.errorType === "TIMEOUT" &&
      /still being read at this tool call's deadline/
        .test(e.message),
  );
});
