// The masker of configured secrets (lib/secrets.ts): each form an upstream may echo, parts of a
// key where a cut leaves them, values walked deeply, and ordinary text left alone.
import assert from "node:assert/strict";
import { REDACTED, SecretMasker } from "../lib/secrets.ts";
import { Logger } from "../lib/log.ts";
import { leakedForms, secretForms } from "./fakes/secret_forms.ts";

const KEY = "3f9a1c7e5b2d4086a1c3e5f7092b4d6e";
const masker = new SecretMasker([KEY]);

Deno.test("SecretMasker.mask() masks every form of the key, whatever surrounds it", () => {
  for (const form of secretForms(KEY)) {
    for (const around of [["", ""], ["title ", " end"], ['{"t":"', '"}'], ["api_key=", "&x=1"]]) {
      const text = `${around[0]}${form.echo}${around[1]}`;
      const masked = masker.mask(text);
      assert.deepEqual(leakedForms(masked, KEY), [], `${form.name} in ${JSON.stringify(text)}`);
      assert.ok(masked.includes(REDACTED), form.name);
      assert.ok(masked.startsWith(around[0]!.slice(0, -1)), `${form.name}: what comes before stays`);
    }
  }
});

Deno.test("SecretMasker.mask() masks every form inside a JSON text, and inside JSON of JSON", () => {
  for (const form of secretForms(KEY)) {
    const once = JSON.stringify({ title: `Series ${form.echo}` });
    for (const text of [once, JSON.stringify({ body: once })]) {
      const masked = masker.mask(text);
      assert.deepEqual(leakedForms(masked, KEY), [], `${form.name} in ${text}`);
      assert.doesNotThrow(() => JSON.parse(masked), `${form.name}: still JSON`);
      assert.match(masked, /\[redacted\]/, `${form.name} in ${text}`);
    }
  }
});

Deno.test("SecretMasker.mask() masks a head or tail a cut leaves at either end of a text", () => {
  for (let n = 8; n < KEY.length; n++) {
    assert.equal(masker.mask(`cut at ${KEY.slice(0, n)}`), `cut at ${REDACTED}`, `head of ${n}`);
    assert.equal(masker.mask(`${KEY.slice(-n)} was cut`), `${REDACTED} was cut`, `tail of ${n}`);
  }
  // Masked before a cut, the key leaves no part at the cut: the marker is what gets cut.
  const text = `Series ${KEY} and more words`;
  for (let cut = 0; cut <= text.length; cut++) {
    assert.deepEqual(leakedForms(masker.mask(text).slice(0, cut), KEY), [], `cut at ${cut}`);
  }
});

Deno.test("SecretMasker.mask() masks any 16 characters of the key in the middle of a text", () => {
  for (let i = 0; i + 16 <= KEY.length; i++) {
    const part = KEY.slice(i, i + 16);
    const masked = masker.mask(`see ${part.toUpperCase()} here, and ${[...part].join("\u200b")} there`);
    assert.equal(masked.split(REDACTED).length, 3, masked);
  }
  assert.equal(
    masker.mask(`a 15-character part ${KEY.slice(3, 18)} stays`),
    `a 15-character part ${KEY.slice(3, 18)} stays`,
  );
});

Deno.test("SecretMasker.mask() leaves ordinary text, numbers, dates and other hex alone", () => {
  const texts = [
    "Real Gross National Product, Billions of Chained 2012 Dollars, Annual, Not Seasonally Adjusted",
    "1929-01-01,1065.9,2013-08-14,2013-08-14\r\n1930-01-01,975.5,2013-08-14,2013-08-14",
    "sha256 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08 of the body",
    "https://api.stlouisfed.org/fred/series?series_id=GNPCA&api_key=***&file_type=json",
    "a-b_c.d e+f \u200b \u00ad ... …",
    "3f9a1c7e in the middle of a text is not masked",
  ];
  for (const text of texts) assert.equal(masker.mask(text), text);
});

Deno.test("SecretMasker.maskDeep() masks strings and keys at any depth and keeps what holds none", () => {
  const value = { a: [1, { b: `x ${KEY}`, [KEY]: null }], c: true, d: "plain" };
  const masked = masker.maskDeep(value);
  assert.deepEqual(masked, { a: [1, { b: `x ${REDACTED}`, [REDACTED]: null }], c: true, d: "plain" });
  assert.equal(
    value.a[1] && (value.a[1] as Record<string, unknown>)["b"],
    `x ${KEY}`,
    "the input is not changed",
  );
  let deep: unknown = `deep ${KEY}`;
  for (let i = 0; i < 100; i++) deep = [deep];
  assert.ok(!JSON.stringify(masker.maskDeep(deep)).includes(KEY), "nested 100 deep");
  const clean = { a: [1, { b: "x" }] };
  assert.equal(masker.maskDeep(clean), clean, "nothing to mask: the same value");
});

Deno.test("SecretMasker masks short secrets only verbatim and every secret given", () => {
  const two = new SecretMasker(["s3cr", "an-other-secret-value-42", "abcdefgh12345678"]);
  assert.equal(two.mask("x s3cr y S3CR"), `x ${REDACTED} y S3CR`);
  assert.equal(two.mask("AN OTHER SECRET VALUE 42"), REDACTED);
  assert.equal(two.mask("id abcdefgh12345678."), `id ${REDACTED}.`);
  assert.equal(new SecretMasker([]).mask(`x ${KEY}`), `x ${KEY}`);
});

Deno.test("SecretMasker.mask() scans a megabyte in linear time, the key at its end", () => {
  const lines = "1929-01-01,1065.9,2013-08-14,2013-08-14\r\n".repeat(25_000);
  const masked = masker.mask(`${lines}${KEY}`);
  assert.equal(masked, `${lines}${REDACTED}`);
});

Deno.test("Logger masks the key in its lines in the forms the masker covers", () => {
  const lines: string[] = [];
  const logger = new Logger({ write: (l) => lines.push(l), secrets: [KEY] });
  for (const form of secretForms(KEY)) logger.info("upstream said", { body: `title ${form.echo}` });
  assert.equal(lines.length, secretForms(KEY).length);
  for (const line of lines) assert.deepEqual(leakedForms(line, KEY), [], line);
});

Deno.test("SecretMasker takes every white space JavaScript knows as a gap inside a key", () => {
  const key = "0123456789abcdef0fedcba987654321";
  const masker = new SecretMasker([key]);
  for (
    const space of ["\u2009", "\u1680", "\u2000", "\u200a", "\u2028", "\u2029", "\u202f", "\u205f", "\u3000"]
  ) {
    assert.ok(/\s/.test(space));
    const split = key.match(/.{4}/g)!.join(space);
    assert.ok(
      !masker.mask(`title ${split} end`).includes(key.slice(0, 4) + space),
      `U+${space.charCodeAt(0).toString(16)}`,
    );
  }
});
