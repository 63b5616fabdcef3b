// The providers the tests serve: every provider the server ships, plus the conformance suite's
// fixture provider (tests/conformance/provider/), which is test code and ships in no artefact.
import type { ProviderSpec } from "../../lib/config/provider_spec.ts";
import { PROVIDERS } from "../../lib/providers/registry.ts";
import { conformanceSpec } from "../conformance/provider/config.ts";

/** The shipped providers and the conformance fixtures (served only when named in --providers). */
export const TEST_PROVIDERS: readonly ProviderSpec[] = [...PROVIDERS, conformanceSpec];
