import assert from "node:assert/strict";
import { loadYaml, parseFullYaml, parseYaml, plainYaml } from "../../lib/config/yaml.ts";
import { everyProviderConfig } from "../../tools/bench/startup_ways.ts";

await loadYaml();

/** js-yaml's value, or the error it throws. */
function full(text: string): { value: unknown } | { error: string } {
  try {
    return { value: parseFullYaml(text) };
  } catch (e) {
    return { error: e instanceof Error ? e.message : String(e) };
  }
}

/** plainYaml either leaves `text` to js-yaml or gives exactly js-yaml's value. */
function agrees(text: string): "plain" | "js-yaml" {
  const plain = plainYaml(text);
  if (plain === undefined) return "js-yaml";
  const expected = full(text);
  assert.ok("value" in expected, `plainYaml read text js-yaml refuses: ${JSON.stringify(text)}`);
  assert.deepEqual(plain.value, expected.value, JSON.stringify(text));
  return "plain";
}

const SCALARS = [
  "no",
  "yes",
  "on",
  "off",
  "y",
  "true",
  "True",
  "TRUE",
  "tRue",
  "false",
  "False",
  "FALSE",
  "~",
  "null",
  "Null",
  "NULL",
  "nULL",
  "0",
  "00",
  "012",
  "08",
  "+5",
  "-5",
  "-0",
  "1_000",
  "0x1F",
  "0X1F",
  "0o17",
  "0b101",
  "1e3",
  "1E-3",
  "1.",
  ".5",
  "-.5",
  "+.5",
  "1.5e+3",
  ".inf",
  ".Inf",
  ".INF",
  "-.inf",
  "+.inf",
  ".nan",
  ".NaN",
  ".NAN",
  "2024_06",
  "3:30",
  "12:30:00",
  "2024-01-02",
  "https://snl.no",
  "http://127.0.0.1:8080/x?y=1",
  "a b",
  "a, b",
  "a,b",
  "a - b",
  "-a",
  "- a",
  "a:",
  "a: b",
  "a:b",
  "a #c",
  "a#b",
  "#a",
  "@a",
  "a@b.org",
  "`a`",
  "&a",
  "*a",
  "!a",
  "!!str 1",
  "%a",
  "|",
  ">",
  "?",
  "? a",
  "[]",
  "{}",
  "[a]",
  "{a: 1}",
  "[ ]",
  '""',
  '"a"',
  '"a\\"b"',
  '"a\\\\b"',
  '"a\\nb"',
  '"a\'b"',
  "''",
  "'a'",
  "'it''s'",
  "'a\"b'",
  "'a",
  '"a',
  "a'b",
  "~/x",
  "=",
  "+",
  ".",
  "/",
  "_",
  "ÆØÅ",
  "a\u00a0b",
];

Deno.test("plainYaml() gives js-yaml's value for every scalar it reads, in a mapping and in a sequence", () => {
  let plain = 0;
  for (const s of SCALARS) {
    for (
      const text of [
        `k: ${s}\n`,
        `k: ${s} # note\n`,
        `k:    ${s}   \n`,
        `l:\n  - ${s}\n  - x\n`,
        `l:\n- ${s}\n`,
        `a:\n  b:\n    c: ${s}\n  d: 1\n`,
      ]
    ) {
      if (agrees(text) === "plain") plain++;
    }
  }
  assert.ok(plain > 300, `most of them are read without js-yaml (${plain})`);
});

Deno.test("plainYaml() reads the shipped config/apis.yaml and a file setting keys for every provider", () => {
  for (const path of ["config/apis.yaml", "config/apis.example.yaml"]) {
    const text = Deno.readTextFileSync(new URL(`../../${path}`, import.meta.url));
    if (text.replace(/^\s*#.*$/gm, "").trim() === "") continue;
    assert.equal(agrees(text), "plain", path);
  }
  assert.equal(agrees(everyProviderConfig()), "plain");
  assert.equal(agrees(everyProviderConfig().replaceAll("\n", "\r\n")), "plain", "CRLF line ends");
});

Deno.test("plainYaml() leaves what it does not read plainly to js-yaml (which gives its value or its error)", () => {
  const cases = [
    "a:\n    b: 1\n  c: 2\n", // a dedent to no enclosing level
    "a:\n  - x\n    - y\n", // a deeper line under an item
    "a: 1\na: 2\n", // a duplicate key
    "a:\n\tb: 1\n", // a tab
    "\ufeffa: 1\n", // a byte order mark
    "---\na: 1\n", // a document marker
    "  a: 1\n", // an indented first line
    "a: 1\n  b: 2\n", // a deeper line after a scalar
    "a: |\n  text\n", // a block scalar
    "a: &x 1\nb: *x\n", // an anchor and an alias
    "a: [1, 2]\n", // a flow sequence
    "a:\n  - b: 1\n", // a mapping in a sequence
    "a:\n  -\n", // an empty item
    '"a": 1\n', // a quoted key
    "__proto__: 1\n",
    "a: b\n  c\n", // a multi-line plain scalar
    "- a\n- b\n", // a sequence at the root is read plainly too
    "# only comments\n",
    "a:\n",
    "a:\n- x\n- y\nb: 1\n", // a sequence at its key's indentation, then the next key
    "- a\nb: 1\n", // a key after a sequence at the root
    "a:\n  - x\n  b: 1\n", // a key after a nested sequence, at its indentation
  ];
  const read = cases.map((text) => agrees(text));
  assert.deepEqual(
    read,
    [...Array(16).fill("js-yaml"), "plain", "js-yaml", "plain", "plain", "js-yaml", "js-yaml"],
    JSON.stringify(read),
  );
});

Deno.test("parseYaml() reads plain text the same whether or not js-yaml is loaded", () => {
  const text =
    "enabled_providers:\n  - boj\nproviders:\n  boj:\n    timeout: 12 # seconds\n    base_url: 'https://x.example'\n";
  assert.deepEqual(parseYaml(text), {
    enabled_providers: ["boj"],
    providers: { boj: { timeout: 12, base_url: "https://x.example" } },
  });
  assert.deepEqual(parseYaml(text), parseFullYaml(text));
});

Deno.test("plainYaml() leaves control characters in quotes and null bytes to js-yaml, which refuses them", () => {
  for (
    const text of [
      "a: 'x\u0001y'\n",
      'a: "x\u001fy"\n',
      "- 'x\u0000'\n",
      "a: 1 # \u0000\n",
      "# \u0000\na: 1\n",
    ]
  ) {
    assert.equal(plainYaml(text), undefined, JSON.stringify(text));
    assert.ok("error" in full(text), JSON.stringify(text));
  }
});
