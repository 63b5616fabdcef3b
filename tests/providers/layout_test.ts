// One tool per file in every provider: each tool of the listings is defined in exactly one file of
// its provider's tools/ folder, and each such file defines one tool. (Import circles, providers
// importing each other and file lengths are checked for all of lib/ by tests/architecture/.)
import assert from "node:assert/strict";

const ROOT = new URL("../../", import.meta.url);

Deno.test("lib/providers: each tool of a provider is defined in a file of its own under tools/", async () => {
  const file = JSON.parse(await Deno.readTextFile(new URL("lib/providers/listings.json", ROOT))) as {
    providers: Record<
      string,
      {
        variants: { listing: { tools: { tool: { name: string } }[]; unavailable?: { tools: string[] }[] } }[];
      }
    >;
  };
  const problems: string[] = [];
  for (const [id, entry] of Object.entries(file.providers)) {
    const names = new Set(entry.variants.flatMap((v) => [
      ...v.listing.tools.map((t) => t.tool.name),
      ...(v.listing.unavailable ?? []).flatMap((u) => u.tools),
    ]));
    const dir = new URL(`lib/providers/${id}/tools/`, ROOT);
    const files: [string, string][] = [];
    for await (const e of Deno.readDir(dir)) {
      if (e.isFile && e.name.endsWith(".ts")) {
        files.push([e.name, await Deno.readTextFile(new URL(e.name, dir))]);
      }
    }
    // Where a tool's name is given: its definition's `name`, or the first argument of the
    // conformance fixtures' builders.
    const defines = (text: string, name: string) =>
      new RegExp(`(name: |fixture\\(\\s*|confirmWithState\\(\\s*)"${name}"`).test(text);
    for (const name of names) {
      const homes = files.filter(([, text]) => defines(text, name)).map(([f]) => f);
      if (homes.length !== 1) problems.push(`${id}: ${name} is defined in ${homes.length} files of tools/`);
    }
    for (const [f, text] of files) {
      const defined = [...names].filter((name) => defines(text, name));
      if (defined.length !== 1) problems.push(`${id}: tools/${f} defines ${defined.length} tools`);
    }
  }
  assert.deepEqual(problems, []);
});
