// Reading tool results in end-to-end tests: the text blocks, the structured content of a
// success, and the error payload of a failure (_meta["opendata-mcp/error"], as the error contract puts it).
import assert from "node:assert/strict";
import type { Client } from "./sdk_client.ts";

/** What `client.callTool()` resolves to. */
export type ToolResult = Awaited<ReturnType<Client["callTool"]>>;

/** The text of every text block, in order. */
export function texts(r: ToolResult): string[] {
  return (r.content as { type: string; text?: string }[]).filter((c) => c.type === "text").map((c) =>
    c.text ?? ""
  );
}

/** The structured content of a successful result (fails the test on an error result). */
export function ok(r: ToolResult): Record<string, unknown> {
  assert.notEqual(r.isError, true, `unexpected error: ${texts(r)[0]?.slice(0, 500)}`);
  assert.ok(r.structuredContent, "structuredContent is present");
  return r.structuredContent as Record<string, unknown>;
}

/** The error payload of a failed result (fails the test on a success). */
export function errorOf(r: ToolResult): Record<string, unknown> {
  assert.equal(r.isError, true, `expected an error, got ${texts(r)[0]?.slice(0, 300)}`);
  assert.equal(r.structuredContent, undefined, "error results carry no structuredContent");
  assert.equal(texts(r).length, 1, "an error is one text block");
  return payloadOf(r);
}

/** The error contract's payload of a result, as `_meta["opendata-mcp/error"]` carries it. */
export function payloadOf(r: { _meta?: unknown }): Record<string, unknown> {
  const payload = (r._meta as Record<string, unknown> | undefined)?.["opendata-mcp/error"];
  assert.ok(typeof payload === "object" && payload !== null, "the payload is in _meta");
  return payload as Record<string, unknown>;
}

/** Names of the core tools every server lists, whatever toolsets it serves. */
export const CORE_TOOLS: readonly string[] = ["opendata_search", "opendata_describe", "opendata_call"];

/** The listed tools without the core ones: what a provider itself serves. */
export function providerTools<T extends { name: string }>(tools: readonly T[]): T[] {
  return tools.filter((t) => !CORE_TOOLS.includes(t.name));
}

/** Parses a CSV the server wrote (RFC 4180: quoted cells, CRLF). */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = "";
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ",") {
      row.push(cell);
      cell = "";
    } else if (c === "\r" && text[i + 1] === "\n") {
      row.push(cell);
      rows.push(row);
      row = [];
      cell = "";
      i++;
    } else cell += c;
  }
  return rows;
}
