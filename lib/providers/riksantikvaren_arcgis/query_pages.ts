// arcgis-query's page loop (tools/query.ts): a layer's features read page by page while the
// server says more follow, within the call's time, each feature once.
import { ToolError } from "../../errors.ts";
import type { QueryValue } from "../../http/fetch_client.ts";
import { budgetFor, withTimeout } from "./_common.ts";
import type { ArcgisToolDeps } from "./_common.ts";
import type { CallOptions } from "./client.ts";
import { asObject, esriToGeoJson, normalizeAttributes, objectId, parseFields } from "./esri.ts";
import type { Collected } from "./query_file.ts";

/** What the page loop reads and where its notes go. */
export interface PageLoop {
  ref: { service: string; type: "MapServer"; layer: number };
  params: Record<string, QueryValue>;
  call: CallOptions;
  signal: AbortSignal;
  offset: number;
  /** Features to read. */
  want: number;
  toFile: boolean;
  /** Whether the layer pages (null: unknown). */
  layerPaging: () => Promise<boolean | null>;
  warnings: string[];
}

/**
 * Reads pages while the server says more follow (exceededTransferLimit), up to `want` features,
 * `max_pages` requests (a file: as many as the call's time allows), skipping features seen.
 */
export async function collectPages(deps: ArcgisToolDeps, loop: PageLoop): Promise<Collected> {
  const { client, settings } = deps;
  const { ref, params: common, call, want, toFile, layerPaging, warnings } = loop;
  const got: Collected = {
    features: [],
    fields: [],
    exceeded: false,
    requests: 0,
    sourceUrl: "",
    next: loop.offset,
    repeated: false,
    shortOfTime: false,
    overflowed: false,
    failed: false,
  };
  const seen = new Set<string>();
  while (got.features.length < want && (toFile || got.requests < settings.max_pages)) {
    if ((got.requests > 0 || loop.offset > 0) && (await layerPaging()) === false) break;
    let pageCall = call;
    if (got.requests > 0) {
      const budget = budgetFor(deps);
      if (!budget.go) {
        got.shortOfTime = true;
        break;
      }
      pageCall = withTimeout(call, budget);
    }
    let r;
    try {
      r = await client.query(ref, {
        ...common,
        resultOffset: got.next,
        resultRecordCount: want - got.features.length,
      }, pageCall);
    } catch (e) {
      // What the earlier pages brought is still an answer; next_offset asks for the rest.
      if (got.requests === 0 || loop.signal.aborted || !(e instanceof ToolError) || !e.retryable) throw e;
      if (e.errorType === "TIMEOUT") got.shortOfTime = true;
      else {
        got.failed = true;
        warnings.push(`The page at offset ${got.next} failed: ${e.message}; continue with next_offset`);
      }
      break;
    }
    got.requests++;
    if (!got.sourceUrl) got.sourceUrl = r.url;
    const body = asObject(r.data) ?? {};
    if (got.fields.length === 0) got.fields = parseFields(body["fields"]);
    const list = Array.isArray(body["features"]) ? body["features"] : [];
    got.exceeded = body["exceededTransferLimit"] === true;
    let fresh = 0;
    // One budget for matching holes across the whole answer (lib/providers/riksantikvaren_arcgis/esri.ts).
    const work = { visits: 0 };
    for (const item of list) {
      const f = asObject(item);
      if (!f) continue;
      const attrs = normalizeAttributes(f["attributes"], got.fields);
      const oid = objectId(attrs, got.fields);
      if (oid !== null && seen.has(oid)) continue;
      if (oid !== null) seen.add(oid);
      got.features.push({ attrs, geometry: esriToGeoJson(f["geometry"], work) });
      fresh++;
    }
    got.next += list.length;
    if (list.length > 0 && fresh === 0) {
      warnings.push(
        "The layer sent the same features again for a later offset: it may not support paging",
      );
      got.repeated = true;
      got.exceeded = false;
      break;
    }
    if (list.length === 0 || !got.exceeded) break;
  }
  // A server that ignores resultRecordCount sends more than asked: keep the page size.
  got.overflowed = got.features.length > want;
  if (got.overflowed) {
    got.features.length = want;
    got.exceeded = true;
    warnings.push(
      "The server sent more features than asked for (it may not support paging); the rest were left out",
    );
  }
  return got;
}
