import type { ProviderSpec } from "../config/provider_spec.ts";
import { bojSpec } from "./boj/config.ts";
import { conformanceSpec } from "./conformance/config.ts";
import { exampleSpec } from "./example/config.ts";
import { fredSpec } from "./fred/config.ts";
import { geonorgeSpec } from "./geonorge/config.ts";
import { riksantikvarenArcgisSpec } from "./riksantikvaren_arcgis/config.ts";
import { riksantikvarenOgcSpec } from "./riksantikvaren_ogc/config.ts";
import { snlSpec } from "./snl/config.ts";
import { wikipediaSpec } from "./wikipedia/config.ts";
import { worldbankSpec } from "./worldbank/config.ts";

/**
 * Every provider the binary knows, in the order their tools are listed. Each spec loads its
 * code with a literal dynamic import, so only enabled providers load at start-up and
 * `deno compile` still bundles them all. Adding a provider adds one line here.
 */
export const PROVIDERS: readonly ProviderSpec[] = [
  worldbankSpec,
  bojSpec,
  fredSpec,
  wikipediaSpec,
  snlSpec,
  riksantikvarenOgcSpec,
  riksantikvarenArcgisSpec,
  geonorgeSpec,
  exampleSpec,
  conformanceSpec,
];
