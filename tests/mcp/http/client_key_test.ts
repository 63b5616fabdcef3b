import assert from "node:assert/strict";
import { clientKey, ipv6Groups } from "../../../lib/mcp/http/_client_key.ts";

Deno.test("clientKey() keys IPv4 addresses one by one", () => {
  assert.equal(clientKey("203.0.113.9"), "ip:203.0.113.9");
  assert.notEqual(clientKey("203.0.113.9"), clientKey("203.0.113.10"));
});

Deno.test("clientKey() groups IPv6 addresses by /64 by default, in every spelling", () => {
  const key = clientKey("2001:db8:0:0:1::7");
  assert.equal(key, "ip:2001:db8:0:0:0:0:0:0/64");
  for (const same of ["2001:db8::ffff", "[2001:db8::1]", "2001:DB8:0:0:abcd:1:2:3", "2001:db8::1%eth0"]) {
    assert.equal(clientKey(same), key, same);
  }
  assert.notEqual(clientKey("2001:db8:0:1::1"), key, "the next /64 is another client");
});

Deno.test("clientKey() takes the configured IPv6 prefix: 128 counts each address, 48 a whole site", () => {
  assert.notEqual(
    clientKey("2001:db8::1", { ipv6Prefix: 128 }),
    clientKey("2001:db8::2", { ipv6Prefix: 128 }),
  );
  assert.equal(clientKey("2001:db8::1", { ipv6Prefix: 128 }), "ip:2001:db8:0:0:0:0:0:1");
  assert.equal(
    clientKey("2001:db8:0:ff::1", { ipv6Prefix: 48 }),
    clientKey("2001:db8:0:1::1", { ipv6Prefix: 48 }),
  );
  assert.equal(clientKey("2001:db8:aaaa:bbbb::1", { ipv6Prefix: 56 }), "ip:2001:db8:aaaa:bb00:0:0:0:0/56");
});

Deno.test("clientKey() counts IPv4-mapped IPv6 addresses as their IPv4 address", () => {
  assert.equal(clientKey("::ffff:198.51.100.7"), "ip:198.51.100.7");
  assert.equal(clientKey("::ffff:c633:6407"), "ip:198.51.100.7");
});

Deno.test("clientKey() follows the principal when authentication names one", () => {
  assert.equal(clientKey("203.0.113.9", { principal: "user-42" }), "principal:user-42");
  assert.equal(
    clientKey("2001:db8::1", { principal: "user-42" }),
    clientKey("198.51.100.1", { principal: "user-42" }),
  );
  assert.equal(
    clientKey("203.0.113.9", { principal: "" }),
    "ip:203.0.113.9",
    "an empty principal names no one",
  );
});

Deno.test("clientKey() keeps what is not an address as its own key", () => {
  assert.equal(clientKey("unknown"), "ip:unknown");
  assert.equal(clientKey("1:2:3"), "ip:1:2:3");
  assert.equal(ipv6Groups("1::2::3"), undefined);
  assert.equal(ipv6Groups("::1.2.3.256"), undefined);
  assert.deepEqual(ipv6Groups("::1"), [0, 0, 0, 0, 0, 0, 0, 1]);
});
