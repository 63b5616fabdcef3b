import assert from "node:assert/strict";
import { isoTime, LineWriter, Logger, maskSecretFully, maskSecrets, mayHoldSecret } from "../lib/log.ts";
import type { ByteSink } from "../lib/log.ts";
import { until } from "./harness/until.ts";

Deno.test("Logger writes one JSON object per line with inherited fields and masks secrets", () => {
  const lines: string[] = [];
  const logger = new Logger({
    level: "info",
    write: (l) => lines.push(l),
    secrets: ["hunter2-secret"],
    now: () => 0,
  });
  const child = logger.child({ request_id: "r1" }).child({ tool_name: "t" });
  child.debug("dropped");
  child.info("called", { url: "https://x/?api_key=hunter2-secret" });
  child.addSecret("late-secret-value");
  child.warn("oops", { error: new Error("late-secret-value leaked") });
  assert.equal(lines.length, 2);
  const first = JSON.parse(lines[0]!);
  assert.deepEqual(first, {
    time: "1970-01-01T00:00:00.000Z",
    level: "info",
    msg: "called",
    request_id: "r1",
    tool_name: "t",
    url: "https://x/?api_key=***",
  });
  assert.deepEqual(JSON.parse(lines[1]!).error, { name: "Error", message: "*** leaked" });
});

Deno.test("Logger.setLevel() applies to every logger sharing the output", () => {
  const lines: string[] = [];
  const root = new Logger({ level: "error", write: (l) => lines.push(l) });
  const child = root.child({ a: 1 });
  child.info("hidden");
  root.setLevel("debug");
  child.debug("shown");
  assert.equal(lines.length, 1);
  assert.equal(child.enabled("debug"), true);
});

Deno.test("maskSecrets() replaces every occurrence", () => {
  assert.equal(maskSecrets("a-KEY-b-KEY", ["KEY"]), "a-***-b-***");
});

Deno.test("Logger.child() with skip leaves out those messages, in it and its children only", () => {
  const lines: string[] = [];
  const root = new Logger({ write: (l) => lines.push(JSON.parse(l).msg) });
  const quiet = root.child({ provider: "fred" }, new Set(["said at start"]));
  quiet.warn("said at start");
  quiet.child({ tool_name: "x" }).warn("said at start");
  quiet.warn("new");
  root.warn("said at start");
  assert.deepEqual(lines, ["new", "said at start"]);
});

Deno.test("Logger logs an Error as its name and message within four levels of its fields, and never its stack", () => {
  const lines: string[] = [];
  const logger = new Logger({ write: (l) => lines.push(l), now: () => 0 });
  const error = new TypeError("bad input");
  logger.child({ cause: error }).info("inherited");
  logger.error("nested", { upstream: { error }, errors: [error] });
  logger.info("plain", { count: 2, nested: { ok: true } });
  logger.warn("deep", { a: { b: { c: { error } } } });
  const [inherited, nested, plain, deep] = lines.map((l) => JSON.parse(l));
  const logged = { name: "TypeError", message: "bad input" };
  assert.deepEqual(inherited.cause, logged);
  assert.deepEqual(nested.upstream, { error: logged });
  assert.deepEqual(nested.errors, [logged]);
  assert.deepEqual(plain.nested, { ok: true });
  assert.deepEqual(deep.a.b.c.error, logged);
  assert.ok(!lines.join("\n").includes("at "), "no stack frame in any line");
});

/**
 * A sink that records each write as `sync:` or `async:` and its text; an asynchronous write
 * finishes at once, or, given `pending`, when the test calls the function it leaves there.
 */
function recordingSink(writes: string[], pending?: (() => void)[]): ByteSink {
  const decoder = new TextDecoder();
  return {
    writeSync(p) {
      writes.push(`sync:${decoder.decode(p)}`);
      return p.length;
    },
    write(p) {
      writes.push(`async:${decoder.decode(p)}`);
      if (!pending) return Promise.resolve(p.length);
      return new Promise((resolve) => pending.push(() => resolve(p.length)));
    },
  };
}

Deno.test("LineWriter writes each line at once until the process serves, then many lines to a write", async () => {
  const writes: string[] = [];
  const pending: (() => void)[] = [];
  // Each write finishes when the test says so, like a busy pipe.
  const writer = new LineWriter(recordingSink(writes, pending));
  writer.write("a");
  writer.write("b");
  assert.deepEqual(writes, ["sync:a\n", "sync:b\n"], "before serving: one synchronous write a line");

  writer.serving();
  writer.write("c");
  writer.write("d");
  await Promise.resolve();
  assert.deepEqual(writes.slice(2), ["async:c\nd\n"], "the lines of one synchronous run start one write");
  writer.write("e");
  writer.write("f");
  let drained = false;
  const draining = writer.drain().then(() => drained = true);
  pending.shift()!();
  await Promise.resolve();
  await Promise.resolve();
  assert.deepEqual(writes.slice(3), ["async:e\nf\n"], "lines logged meanwhile go out together, in order");
  assert.equal(drained, false, "drain() waits for the last write");
  pending.shift()!();
  await draining;

  writer.write("g");
  await Promise.resolve();
  writer.write("h");
  writer.flushSync();
  assert.deepEqual(writes.slice(4), ["async:g\n", "sync:h\n"], "flushSync() writes what waits, at once");
  pending.shift()!();
  await writer.drain();
});

Deno.test("isoTime() formats as Date does, across seconds, centuries, and before 1970", () => {
  const times = [
    0,
    1,
    999,
    1000,
    1_764_410_000_123,
    1_764_410_000_999,
    1_764_410_001_000,
    1_764_410_000_123.9,
    -1,
    -1.5,
    -999,
    -1000,
    -1001,
    -86_400_000_123,
    253_402_300_799_999,
    253_402_300_800_000,
    8.64e15,
    -8.64e15,
  ];
  // Twice, in order and back: the kept second must never leak into another.
  for (const t of [...times, ...times.toReversed()]) {
    assert.equal(isoTime(t), new Date(t).toISOString(), String(t));
  }
  assert.throws(() => isoTime(8.64e15 + 1), RangeError);
  assert.throws(() => isoTime(Number.NaN), RangeError);
});

Deno.test("LineWriter gathers the lines of a moment into one write while serving", async (t) => {
  const gathering = (gatherBytes?: number) => {
    const writes: string[] = [];
    const writer = new LineWriter(recordingSink(writes), {
      gatherMs: 60_000,
      ...(gatherBytes ? { gatherBytes } : {}),
    });
    writer.serving();
    return { writer, writes };
  };
  await t.step("lines of many runs wait for the batch; drain() writes it without waiting", async () => {
    const { writer, writes } = gathering();
    // Each line in a turn of the event loop of its own.
    const nextTurn = () => new Promise((resolve) => setTimeout(resolve, 0));
    writer.write("a");
    await nextTurn();
    writer.write("b");
    await nextTurn();
    assert.deepEqual(writes, [], "nothing written within the moment");
    await writer.drain();
    assert.deepEqual(writes, ["async:a\nb\n"], "one write for both, at drain");
    writer.write("c");
    await writer.drain();
    assert.deepEqual(writes.slice(1), ["async:c\n"], "the next batch gathers anew");
  });
  await t.step("a batch that reaches gatherBytes goes out at once", async () => {
    const { writer, writes } = gathering(8);
    writer.write("12345");
    await Promise.resolve();
    assert.deepEqual(writes, []);
    writer.write("67890");
    await Promise.resolve();
    assert.deepEqual(writes, ["async:12345\n67890\n"]);
    await writer.drain();
  });
  await t.step("the batch goes out by itself after gatherMs", async () => {
    const writes: string[] = [];
    const writer = new LineWriter(recordingSink(writes), { gatherMs: 10 });
    writer.serving();
    writer.write("x");
    writer.write("y");
    await until("the batch's own write", () => writes.length > 0);
    assert.deepEqual(writes, ["async:x\ny\n"]);
  });
  await t.step("flushSync() writes the batch and ends its timer", async () => {
    const { writer, writes } = gathering();
    writer.write("d");
    writer.flushSync();
    assert.deepEqual(writes, ["sync:d\n"]);
    await writer.drain();
    assert.deepEqual(writes, ["sync:d\n"], "nothing written twice");
  });
});

Deno.test("LineWriter.drain() writes a line logged while it waits for the last write", async () => {
  // The line comes as the last write ends: in the same microtask as the write's answer, or in the
  // next, when the write is over but drain() has not looked again. Either way it is logged before
  // drain() returns, so it must be out when it does (the process exits right after drain()).
  for (const hops of [0, 1]) {
    const writes: string[] = [];
    let logged = false;
    const decoder = new TextDecoder();
    const writer = new LineWriter({
      writeSync: (p) => p.length,
      write(p) {
        writes.push(decoder.decode(p));
        if (writes.length === 1) {
          let later = Promise.resolve();
          for (let i = 0; i < hops; i++) later = later.then(() => {});
          void later.then(() => {
            writer.write("b");
            logged = true;
          });
        }
        return Promise.resolve(p.length);
      },
    }, { gatherMs: 60_000 });
    writer.serving();
    writer.write("a");
    await writer.drain();
    assert.ok(logged, `b was logged before drain() returned (${hops})`);
    assert.deepEqual(writes, ["a\n", "b\n"], `b logged ${hops} microtasks after the write's answer`);
  }
});

Deno.test("LineWriter drops lines instead of throwing when its sink fails", async () => {
  const broken = new Deno.errors.BrokenPipe("stderr closed");
  const writer = new LineWriter({
    writeSync: () => {
      throw broken;
    },
    write: () => Promise.reject(broken),
  });
  assert.doesNotThrow(() => writer.write("before serving"));
  writer.serving();
  writer.write("while serving");
  await writer.drain();
  writer.write("after a failure");
  await writer.drain();
  assert.doesNotThrow(() => writer.flushSync());
});

Deno.test("LineWriter recovers from a sink that throws at once, and bounds what waits for a stalled one", async (t) => {
  await t.step("a sink that throws instead of rejecting", async () => {
    let calls = 0;
    const writer = new LineWriter({
      writeSync: (p) => p.length,
      write: () => {
        calls++;
        throw new Deno.errors.BadResource("stderr closed");
      },
    });
    writer.serving();
    writer.write("one");
    await writer.drain();
    writer.write("two");
    await writer.drain();
    assert.equal(calls, 2, "each line after a failure starts a write again (nothing is stuck)");
  });
  await t.step("a sink that stops taking lines", async () => {
    const written: string[] = [];
    let release: (() => void) | undefined;
    const decoder = new TextDecoder();
    const writer = new LineWriter({
      writeSync: (p) => p.length,
      write: (p) => {
        written.push(decoder.decode(p));
        return new Promise((resolve) => release = () => resolve(p.length));
      },
    }, { maxQueuedBytes: 100 });
    writer.serving();
    writer.write("first, under way");
    await Promise.resolve();
    for (let i = 0; i < 20; i++) writer.write(`line ${i} ${"x".repeat(10)}`);
    release!();
    await Promise.resolve();
    await Promise.resolve();
    const next = written[1]!.trimEnd().split("\n");
    const notice = JSON.parse(next[0]!);
    assert.equal(notice.msg, "log lines dropped: stderr did not take them fast enough");
    assert.ok(notice.dropped > 0);
    assert.equal(notice.dropped + next.length - 1, 20, "every line is either written or counted");
    assert.ok(next.join("\n").length <= 100 + next[0]!.length + 1, "at most the bound waited");
    release!();
    await writer.drain();
  });
});

Deno.test("maskSecrets() masks a secret in any case, URL-encoded, escaped, spaced, and its head cut off at the end", () => {
  const key = "0123456789abcdef0fedcba987654321";
  const hex = (c: string) => c.charCodeAt(0).toString(16);
  for (
    const echo of [
      key.toUpperCase(),
      [...key].join(" "),
      [...key].join("+"),
      [...key].map((c) => `%${hex(c).toUpperCase()}`).join(""),
      [...key].map((c) => `\\u00${hex(c)}`).join(""),
      [...key].map((c) => `&#${c.charCodeAt(0)};`).join(""),
      [...key].map((c) => `&#x${hex(c)};`).join(""),
    ]
  ) {
    assert.equal(maskSecrets(`key=${echo}&x=1`, [key]), "key=***&x=1", echo);
  }
  assert.equal(maskSecrets(`cut at key=${key.slice(0, 11)}`, [key]), "cut at key=***");
  assert.equal(
    maskSecrets(`{"error":"key=${key.slice(0, 9)}"}`, [key]),
    `{"error":"key=***"}`,
    "cut in a field",
  );
  assert.equal(maskSecrets(`key=${key.slice(0, 9)}… (cut)`, [key]), "key=***… (cut)");
  assert.equal(
    maskSecrets(`cut at key=${key.slice(0, 7)}`, [key]),
    `cut at key=${key.slice(0, 7)}`,
    "7 are kept",
  );
  assert.equal(maskSecrets(`${key.slice(0, 11)} in the middle`, [key]), `${key.slice(0, 11)} in the middle`);
  assert.equal(maskSecrets("a.b*c and a.b*c", ["a.b*c"]), "*** and ***", "regex characters are literal");
});

Deno.test("mayHoldSecret() is true for every text the masking patterns change, and false for lines without the secret", () => {
  const hex = (c: string) => c.charCodeAt(0).toString(16);
  const secrets = [
    "0123456789abcdef0fedcba987654321",
    "Sk-Test_9+zZ.key",
    "short",
    "with space 123456",
    "nøkkel-123456789",
  ];
  let changed = 0;
  for (const key of secrets) {
    const echoes = [
      key,
      key.toUpperCase(),
      key.toLowerCase(),
      [...key].join(" "),
      [...key].join("+"),
      [...key].join("\n\t "),
      [...key].map((c) => `%${hex(c).toUpperCase()}`).join(""),
      [...key].map((c) => `\\u00${hex(c)}`).join(""),
      [...key].map((c) => `&#${c.charCodeAt(0)};`).join(""),
      key.slice(0, 9),
      key.slice(0, 8),
      key.slice(0, 7),
      `${key.slice(0, 4)} ${key.slice(4)}`,
      "",
    ];
    for (const echo of echoes) {
      for (
        const text of [
          `key=${echo}`,
          `{"level":"info","msg":"upstream said ${echo}"}`,
          `${echo}… (cut)`,
          `url https://api.example.org/x?api_key=${echo}&file_type=json`,
          `GET /fred/series?api_key=${echo}`,
          `a ${echo} b`,
        ]
      ) {
        if (maskSecretFully(text, key) === text) continue;
        changed++;
        assert.ok(mayHoldSecret(text, key), `${JSON.stringify(text)} holds ${key}`);
        assert.equal(maskSecrets(text, [key]), maskSecretFully(text, key));
      }
    }
  }
  assert.ok(changed > 100, `the corpus exercises the patterns (${changed})`);
  const key = "0123456789abcdef0fedcba987654321";
  for (
    const line of [
      `{"time":"2026-11-27T08:03:08.662Z","level":"info","msg":"configuration loaded","config_file":"config/apis.yaml"}`,
      `{"time":"2026-11-27T08:03:08.670Z","level":"info","msg":"serving MCP over stdio","tools":3}`,
    ]
  ) {
    assert.equal(mayHoldSecret(line, key), false, line);
    assert.equal(maskSecrets(line, [key]), line);
  }
});
