import type { ProviderSpec } from "../config/provider_spec.ts";
import { withListings } from "../mcp/listing.ts";
import type { ListingFile } from "../mcp/listing.ts";
import { bojSpec } from "./boj/config.ts";
import { exampleSpec } from "./example/config.ts";
import { fredSpec } from "./fred/config.ts";
import { geonorgeSpec } from "./geonorge/config.ts";
import { riksantikvarenArcgisSpec } from "./riksantikvaren_arcgis/config.ts";
import { riksantikvarenOgcSpec } from "./riksantikvaren_ogc/config.ts";
import { snlSpec } from "./snl/config.ts";
import { wikipediaSpec } from "./wikipedia/config.ts";
import { worldbankSpec } from "./worldbank/config.ts";
import listings from "./listings.json" with { type: "json" };

/**
 * Every provider the binary knows, in the order their tools are listed, as its code defines it.
 * Each spec loads its code with a literal dynamic import, so only the providers in use load and
 * `deno compile` still bundles them all. Adding a provider adds one line here (and
 * `deno task schemas` its listings).
 */
export const PROVIDER_SPECS: readonly ProviderSpec[] = [
  worldbankSpec,
  bojSpec,
  fredSpec,
  wikipediaSpec,
  snlSpec,
  riksantikvarenOgcSpec,
  riksantikvarenArcgisSpec,
  geonorgeSpec,
  exampleSpec,
];

/**
 * The providers as the server runs them: with the listings `deno task schemas` generated
 * (listings.json), so tools are listed without loading provider code, which loads on first use.
 */
export const PROVIDERS: readonly ProviderSpec[] = withListings(
  PROVIDER_SPECS,
  listings as unknown as ListingFile,
  // From the sources, each provider's mod.ts is a file beside this one, and one that is missing is
  // skipped at start. In bundle/ (`deno task build`) this module is inside a chunk and every
  // provider's code inside the bundle: their modules get a URL of the "bundle:" scheme, which the
  // start-up check leaves alone, as it does a compiled binary's.
  import.meta.url.endsWith("/providers/registry.ts") ? import.meta.url : "bundle:/lib/providers/registry.ts",
);
