// The server's own process code (main.ts) with the conformance fixture provider added: what the
// official conformance suite and the tests that name `--providers conformance` spawn.
import { main } from "../../main.ts";
import { TEST_PROVIDERS } from "../harness/providers.ts";

await main(TEST_PROVIDERS);
