// The FRED end-to-end tests' set-up for tests/harness/provider.ts. It lives apart from
// fake_fred.ts, which tools/bench loads without the test harness.
import { preset } from "../../harness/provider.ts";
import type { ProviderSetup } from "../../harness/provider.ts";
import { FRED_SETTINGS, fredRoutes } from "./fake_fred.ts";

/** The fred provider against a fake FRED (`fake`, or one with every route) with FRED_SETTINGS. */
export const fred: (more?: Partial<ProviderSetup>) => ProviderSetup = preset({
  provider: "fred",
  routes: fredRoutes(),
  settings: FRED_SETTINGS,
});
