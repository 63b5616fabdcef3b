import assert from "node:assert/strict";
import { lazyOAuth } from "../../../lib/mcp/http/_requests.ts";
import type { OAuthResourceServer } from "../../../lib/mcp/http/oauth.ts";

Deno.test("lazyOAuth() makes the server once, on first use, and tries again after a failed load", async () => {
  let made = 0;
  let fail = true;
  const server = { discover: () => Promise.resolve("metadata") } as unknown as OAuthResourceServer;
  const oauth = lazyOAuth("https://issuer.example", () => {
    made++;
    return fail ? Promise.reject(new Error("load failed")) : Promise.resolve(server);
  });
  assert.equal(oauth.issuer, "https://issuer.example");
  assert.equal(made, 0, "nothing is made before a request needs it");
  await assert.rejects(oauth.discover(), /load failed/);
  fail = false;
  assert.equal(await oauth.discover(), "metadata", "the next request loads again");
  assert.equal(await oauth.discover(), "metadata");
  assert.equal(made, 2, "made again once after the failure, then kept");
});
