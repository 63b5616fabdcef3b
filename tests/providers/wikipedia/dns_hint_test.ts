// A hint matches the failure (docs/apis/wikipedia.md, "The `language` argument"). A name that does not
// resolve is a language that does not exist only when another edition than the default was asked for; the
// default edition not resolving is the network (or DNS), and the hint says to try again, not to check the
// language.
import assert from "node:assert/strict";
import { ToolError } from "../../../lib/errors.ts";
import { providerFor, searchContext } from "../_norway.ts";

Deno.test("wikipedia: a DNS failure of the default edition gets the network hint, an unknown edition the language hint", async () => {
  // ".invalid" never resolves (RFC 2606): the lookup fails at once, without a network.
  const provider = await providerFor("wikipedia", {
    base_url: "http://{lang}.wikipedia.invalid",
    default_language: "no",
    cache_ttl: 0,
    max_retries: 0,
  });
  const summary = provider.tools.find((t) => t.name === "wikipedia-summary")!;
  const failure = async (language: string): Promise<ToolError> => {
    const args = summary.input.parse({ title: "Oslo", language });
    try {
      await summary.handler(args, searchContext());
    } catch (e) {
      assert.ok(e instanceof ToolError, String(e));
      return e;
    }
    throw new Error("the call did not fail");
  };
  const home = await failure("no");
  assert.equal(home.errorType, "TRANSPORT_ERROR");
  assert.match(home.message, /could not be resolved/);
  assert.doesNotMatch(home.hint ?? "", /language edition/, "the default edition: not a language problem");
  const other = await failure("xq");
  assert.match(other.hint ?? "", /"xq" is an existing Wikipedia language edition/);
});
