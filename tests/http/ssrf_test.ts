import assert from "node:assert/strict";
import { UpstreamError } from "../../lib/errors.ts";
import { DEFAULT_RETRY_POLICY } from "../../lib/http/retry.ts";
import { HttpRuntime, loadHttpClient } from "../../lib/http/runtime.ts";
import {
  blockedAddressReason,
  checkUrl,
  isPublicAddress,
  originOf,
  parseIpv6,
  SsrfError,
  ssrfGuard,
} from "../../lib/http/ssrf.ts";
import type { HostResolver } from "../../lib/http/ssrf.ts";
import { FakeUpstream } from "../fakes/upstream.ts";

// Clients are made here directly (the app loads their code with a provider's).
await loadHttpClient();

/** A resolver answering from a table; unknown names fail like NXDOMAIN. */
function table(entries: Record<string, string[]>): HostResolver & { asked: string[] } {
  const asked: string[] = [];
  const fn = (host: string) => {
    asked.push(host);
    const answer = entries[host];
    return answer ? Promise.resolve(answer) : Promise.reject(new Error(`getaddrinfo ENOTFOUND ${host}`));
  };
  return Object.assign(fn, { asked });
}

async function refused(
  url: string,
  resolve: HostResolver = table({}),
  trusted: string[] = [],
): Promise<SsrfError> {
  try {
    await checkUrl(url, { resolve, trustedOrigins: trusted });
  } catch (e) {
    assert.ok(e instanceof SsrfError, `expected SsrfError for ${url}, got ${e}`);
    assert.equal(e.name, "SsrfError");
    return e;
  }
  throw new assert.AssertionError({ message: `${url} was not refused` });
}

Deno.test("checkUrl() refuses schemes other than http and https", async () => {
  for (
    const url of [
      "file:///etc/passwd",
      "ftp://example.com/x",
      "gopher://example.com:70/",
      "data:text/plain,hi",
    ]
  ) {
    const e = await refused(url);
    assert.match(e.message, /is not http or https/);
  }
});

Deno.test("checkUrl() refuses loopback, private, link-local, metadata and CGNAT IPv4 literals", async () => {
  const cases: [string, RegExp][] = [
    ["http://127.0.0.1/", /loopback/],
    ["http://127.8.9.10:8080/", /loopback/],
    ["http://0.0.0.0/", /unspecified/],
    ["http://10.1.2.3/", /private address \(10\.0\.0\.0\/8\)/],
    ["http://172.16.0.1/", /private address \(172\.16\.0\.0\/12\)/],
    ["http://172.31.255.255/", /172\.16\.0\.0\/12/],
    ["http://192.168.1.1/", /192\.168\.0\.0\/16/],
    ["http://169.254.169.254/latest/meta-data/", /metadata/],
    ["http://169.254.1.1/", /link-local/],
    ["http://100.64.0.1/", /carrier-grade NAT/],
    ["http://100.100.100.200/", /carrier-grade NAT/],
    ["http://192.0.0.192/", /192\.0\.0\.192/],
    ["http://224.0.0.1/", /multicast/],
    ["http://255.255.255.255/", /reserved or broadcast/],
  ];
  for (const [url, reason] of cases) {
    const e = await refused(url);
    assert.match(e.reason, reason, url);
  }
});

Deno.test("checkUrl() refuses obfuscated IPv4 forms the URL parser normalizes", async () => {
  // WHATWG URL parsing turns these into 127.0.0.1 / 10.0.0.1 before the guard sees them.
  for (
    const url of [
      "http://2130706433/",
      "http://0x7f.1/",
      "http://0177.0.0.1/",
      "http://127.1/",
      "http://012.0.0.1/",
    ]
  ) {
    const e = await refused(url);
    assert.match(e.reason, /loopback|private/, url);
  }
});

Deno.test("checkUrl() refuses IPv6 loopback, private, link-local and IPv4-mapped equivalents", async () => {
  const cases: [string, RegExp][] = [
    ["http://[::1]/", /IPv6 loopback/],
    ["http://[::]/", /unspecified/],
    ["http://[::ffff:127.0.0.1]/", /IPv4-mapped.*loopback/],
    ["http://[::ffff:7f00:1]/", /IPv4-mapped.*loopback/],
    ["http://[::ffff:169.254.169.254]/", /IPv4-mapped.*metadata/],
    ["http://[::ffff:a00:1]/", /IPv4-mapped.*10\.0\.0\.1.*private/],
    ["http://[::127.0.0.1]/", /IPv4-compatible/],
    ["http://[64:ff9b::a9fe:a9fe]/", /NAT64.*169\.254\.169\.254/],
    ["http://[2002:c0a8:101::1]/", /6to4.*192\.168\.1\.1/],
    ["http://[fd00:ec2::254]/", /unique local/],
    ["http://[fc00::1]/", /unique local/],
    ["http://[fe80::1]/", /link-local IPv6/],
    ["http://[fec0::1]/", /site-local/],
    ["http://[ff02::1]/", /multicast/],
    ["http://[2001::1]/", /Teredo/],
    ["http://[2001:db8::1]/", /documentation/],
  ];
  for (const [url, reason] of cases) {
    const e = await refused(url);
    assert.match(e.reason, reason, url);
  }
});

Deno.test("checkUrl() refuses local host names without resolving them", async () => {
  const resolve = table({});
  for (
    const url of [
      "http://localhost/",
      "http://LOCALHOST./",
      "http://api.localhost/",
      "http://printer.local/",
      "http://metadata.google.internal/computeMetadata/v1/",
      "http://intranet/",
      "http://router.home.arpa/",
    ]
  ) {
    await refused(url, resolve);
  }
  assert.deepEqual(resolve.asked, []);
});

Deno.test("checkUrl() refuses a host name that resolves to a private or loopback address", async () => {
  const resolve = table({
    "evil.example.com": ["93.184.216.34", "10.0.0.5"],
    "rebind.example.org": ["::ffff:127.0.0.1"],
    "v6.example.net": ["fd12:3456::1"],
  });
  assert.match(
    (await refused("https://evil.example.com/x", resolve)).reason,
    /resolves to 10\.0\.0\.5, a private/,
  );
  assert.match((await refused("https://rebind.example.org/", resolve)).reason, /IPv4-mapped/);
  assert.match((await refused("https://v6.example.net/", resolve)).reason, /unique local/);
});

Deno.test("checkUrl() refuses a host that does not resolve or resolves to nothing", async () => {
  const empty: HostResolver = () => Promise.resolve([]);
  assert.match((await refused("https://nothing.example.com/", empty)).reason, /resolves to no address/);
  assert.match((await refused("https://nxdomain.example.com/", table({}))).reason, /could not be checked/);
});

Deno.test("checkUrl() times out a resolver that never answers", async () => {
  const never: HostResolver = () => new Promise(() => {});
  try {
    await checkUrl("https://slow.example.com/", { resolve: never, resolveTimeoutMs: 20 });
    assert.fail("not refused");
  } catch (e) {
    assert.ok(e instanceof SsrfError);
    assert.match(e.reason, /no answer within 20 ms/);
  }
});

Deno.test("checkUrl() refuses URLs with credentials", async () => {
  const e = await refused("https://user:pw@example.com/", table({ "example.com": ["93.184.216.34"] }));
  assert.match(e.reason, /user name or password/);
});

Deno.test("checkUrl() accepts public literals and names that resolve only to public addresses", async () => {
  const resolve = table({ "api.ra.no": ["185.10.10.10", "2a02:c0::1"] });
  await checkUrl("https://api.ra.no/brukerminner/collections?f=json", { resolve });
  await checkUrl("http://93.184.216.34/", { resolve });
  await checkUrl("http://[2606:4700::1111]/", { resolve });
  await checkUrl("https://[::ffff:8.8.8.8]/", { resolve });
  assert.deepEqual(resolve.asked, ["api.ra.no"]);
});

Deno.test("checkUrl() trusts the configured base URL's origin, and only that origin", async () => {
  const trusted = [originOf("http://127.0.0.1:4567/some/base")];
  await checkUrl("http://127.0.0.1:4567/other/path?x=1", { trustedOrigins: trusted });
  // Another port, scheme or host on the same machine is not trusted.
  await refused("http://127.0.0.1:4568/", table({}), trusted);
  await refused("https://127.0.0.1:4567/", table({}), trusted);
  await refused("http://localhost:4567/", table({}), trusted);
});

Deno.test("blockedAddressReason() reads addresses and refuses unreadable ones", () => {
  assert.equal(blockedAddressReason("8.8.8.8"), undefined);
  assert.equal(isPublicAddress("2a00:1450:4010:c05::64"), true);
  assert.equal(isPublicAddress("172.15.255.255"), true);
  assert.equal(isPublicAddress("172.32.0.0"), true);
  assert.equal(isPublicAddress("100.63.255.255"), true);
  assert.equal(isPublicAddress("100.128.0.0"), true);
  assert.match(blockedAddressReason("not-an-ip") ?? "", /not a readable IP address/);
  assert.match(blockedAddressReason("256.1.1.1") ?? "", /not a readable/);
  assert.deepEqual(parseIpv6("1:2:3:4:5:6:7:8"), [1, 2, 3, 4, 5, 6, 7, 8]);
  assert.deepEqual(parseIpv6("::ffff:1.2.3.4"), [0, 0, 0, 0, 0, 0xffff, 0x102, 0x304]);
  assert.equal(parseIpv6("1::2::3"), undefined);
  assert.equal(parseIpv6("1:2:3:4:5:6:7:8:9"), undefined);
});

function runtime(): HttpRuntime {
  return new HttpRuntime({ breaker: { threshold: 2, cooldownMs: 60_000 } });
}

Deno.test("HttpClient refuses a redirect to the metadata address as UPSTREAM_REDIRECT_REFUSED without contacting it", async () => {
  await using fake = FakeUpstream.start([
    {
      path: "/start",
      reply: { status: 302, headers: { location: "http://169.254.169.254/latest/meta-data/" } },
    },
  ]);
  const http = runtime().client({
    provider: "t",
    upstreamName: "Test API",
    baseUrl: fake.origin,
    timeoutMs: 2000,
    retry: { ...DEFAULT_RETRY_POLICY, maxRetries: 0 },
    checkUrl: ssrfGuard({ trustedOrigins: [fake.origin], resolve: table({}) }),
  });
  await assert.rejects(() => http.json("/start"), (e: unknown) => {
    assert.ok(e instanceof UpstreamError);
    assert.equal(e.errorType, "UPSTREAM_REDIRECT_REFUSED");
    assert.equal(e.status, 302);
    assert.equal(e.retryable, false);
    assert.match(e.message, /169\.254\.169\.254.*metadata/);
    return true;
  });
  assert.equal(fake.requestsTo("/start").length, 1);
});

Deno.test("HttpClient with ssrfGuard() keeps refusing without opening the circuit breaker", async () => {
  const rt = runtime();
  const http = rt.client({
    provider: "t",
    upstreamName: "Test API",
    baseUrl: "https://api.example.com",
    timeoutMs: 2000,
    retry: { ...DEFAULT_RETRY_POLICY, maxRetries: 0 },
    checkUrl: ssrfGuard({ trustedOrigins: ["https://api.example.com"], resolve: table({}) }),
  });
  for (let i = 0; i < 5; i++) {
    await assert.rejects(
      () => http.json("http://10.0.0.7/x"),
      (e: unknown) => e instanceof UpstreamError && e.errorType === "VALIDATION_ERROR",
    );
  }
  assert.deepEqual(await rt.breakers(), {}, "no breaker counted the refusals");
});

Deno.test("systemResolver() needs only --allow-net for the looked-up name (checked in a child process)", async () => {
  // localhost resolves from /etc/hosts, so no network is used; example.invalid is outside the
  // child's allowlist, so Deno refuses the lookup itself and the guard fails closed.
  const script = `
    import { checkUrl, systemResolver } from ${
    JSON.stringify(new URL("../../lib/http/ssrf.ts", import.meta.url).href)
  };
    const out = {};
    try { out.localhost = await systemResolver("localhost"); } catch (e) { out.localhost = String(e); }
    try { await checkUrl("https://example.invalid/"); out.outside = "allowed"; } catch (e) { out.outside = e.name + ": " + e.message; }
    console.log(JSON.stringify(out));
  `;
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["eval", "--no-config", "--allow-net=localhost", script],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout);
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  const result = JSON.parse(text);
  assert.ok(Array.isArray(result.localhost), `localhost lookup failed: ${result.localhost}`);
  assert.ok(result.localhost.includes("127.0.0.1") || result.localhost.includes("::1"));
  assert.match(result.outside, /^SsrfError: .*could not be checked/);
});
