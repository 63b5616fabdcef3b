import type { ProviderSpec } from "../config/provider_spec.ts";
import { exampleSpec } from "./example/config.ts";
import { fredSpec } from "./fred/config.ts";

/**
 * Every provider the binary knows, in the order their tools are listed. Each spec loads its
 * code with a literal dynamic import, so only enabled providers load at start-up and
 * `deno compile` still bundles them all. Adding a provider adds one line here.
 */
export const PROVIDERS: readonly ProviderSpec[] = [
  exampleSpec,
  fredSpec,
] as unknown as readonly ProviderSpec[];
