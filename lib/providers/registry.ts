import type { ProviderSpec } from "../config/provider_spec.ts";
import { conformanceSpec } from "./conformance/config.ts";
import { exampleSpec } from "./example/config.ts";

/**
 * Every provider the binary knows, in the order their tools are listed. Each spec loads its
 * code with a literal dynamic import, so only enabled providers load at start-up and
 * `deno compile` still bundles them all. Adding a provider adds one line here.
 */
export const PROVIDERS: readonly ProviderSpec[] = [
  exampleSpec,
  conformanceSpec,
] as unknown as readonly ProviderSpec[];
