// Part of `deno task hostile` (docs/SECURITY.md, "Secrets"): an upstream that echoes the API key. A fake
// FRED puts the key, in every form tests/fakes/secret_forms.ts lists, into series titles, notes,
// realtime_start, observation values and error bodies; a real HTTP server (spawned, on 127.0.0.1) answers
// a client's calls. The report counts the forms of the key found in every output: answers (text and
// structured content), error answers, the files written (read from disk), resources/read, opendata_read
// and the server's log. Every count should be 0. Bounded: about 40 calls.
import { startHttpServer } from "../../tests/harness/spawn_http.ts";
import { removeHome, scratchHome } from "../../tests/harness/spawn.ts";
import { Client, StreamableHTTPClientTransport } from "../../tests/harness/sdk_client.ts";
import { leakedForms } from "../../tests/fakes/secret_forms.ts";
import { fredConfig, startFakeFred, TEST_KEY } from "../../tests/providers/fred/fake_fred.ts";
import { ECHOED_FORMS, routeEchoes } from "../../tests/providers/fred/fake_fred_echo.ts";

type Result = Awaited<ReturnType<Client["callTool"]>>;

/** What one output channel gave away: how many outputs were looked at, and the forms found. */
interface Channel {
  outputs: number;
  leaks: string[];
}

/** The leaks per output channel, and the run's options. */
export interface SecretFigures {
  forms: number;
  channels: Record<string, Channel>;
}

/** Options for {@linkcode secretAttacks}. */
export interface SecretAttackOptions {
  /** Another copy of main.ts to attack (e.g. the code before a change). */
  main?: string;
}

/** Runs the secret-echo attack and counts what leaked where. */
export async function secretAttacks(options: SecretAttackOptions = {}): Promise<SecretFigures> {
  await using fake = startFakeFred();
  routeEchoes(fake);
  const home = scratchHome(fredConfig(fake.origin));
  await using _home = { [Symbol.asyncDispose]: () => Promise.resolve(removeHome(home)) };
  await using server = await startHttpServer({
    args: ["--providers", "fred"],
    home,
    ...(options.main ? { main: options.main } : {}),
  });
  const client = new Client({ name: "hostile-secrets", version: "0" }, { capabilities: {} });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${server.origin}/mcp`)));
  const channels: Record<string, Channel> = {};
  const look = (channel: string, text: string): void => {
    const c = channels[channel] ??= { outputs: 0, leaks: [] };
    c.outputs++;
    for (const form of leakedForms(text, TEST_KEY)) if (!c.leaks.includes(form)) c.leaks.push(form);
  };
  const all = (r: Result): string => JSON.stringify([r.content, r.structuredContent ?? null]);
  const call = (name: string, args: Record<string, unknown>) =>
    client.callTool({ name: "opendata_call", arguments: { tool: name, arguments: JSON.stringify(args) } });
  try {
    for (const response_format of ["markdown", "json"]) {
      for (
        const args of [
          { operation: "search", search_text: "echo" },
          { operation: "get", series_id: "ECHO" },
          { operation: "get_observations", series_id: "ECHO" },
        ]
      ) look("answers", all(await call("fred_series", { ...args, response_format })));
    }
    for (const format of ["csv", "json"]) {
      const wrote = await call("fred_series", {
        operation: "get_observations",
        series_id: "ECHO",
        output: "file",
        format,
      });
      look("answers", all(wrote));
      const uri = String(
        (wrote.structuredContent as Record<string, unknown> | undefined)?.["resource_uri"] ?? "",
      );
      if (!uri) continue;
      look("resources/read", JSON.stringify(await client.readResource({ uri })));
      look("opendata_read", all(await call("opendata_read", { uri })));
    }
    for (const i of ECHOED_FORMS.keys()) {
      look("error answers", all(await call("fred_series", { operation: "get", series_id: `ERR${i}` })));
    }
  } finally {
    await client.close();
  }
  for (const path of filesBelow(home)) {
    if (/\.(csv|json|md)$/.test(path)) look("files on disk", Deno.readTextFileSync(path));
  }
  // Stopped first: a serving process writes its log a moment after the answers, and stop() waits for it.
  await server.stop();
  look("log", server.stderr());
  return { forms: ECHOED_FORMS.length, channels };
}

function filesBelow(dir: string): string[] {
  const out: string[] = [];
  for (const entry of Deno.readDirSync(dir)) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory) out.push(...filesBelow(path));
    else if (entry.isFile) out.push(path);
  }
  return out;
}

/** The report: one row per output channel, the forms that leaked (expected: none). */
export function secretReport(f: SecretFigures): string {
  const rows = Object.entries(f.channels).map(([name, c]) =>
    `| ${name} | ${c.outputs} | ${c.leaks.length} | ${c.leaks.join(", ") || "—"} |`
  );
  const total = Object.values(f.channels).reduce((n, c) => n + c.leaks.length, 0);
  return [
    `A fake FRED echoed the key in ${f.forms} forms (titles, notes, realtime_start, values, error bodies); ` +
    `forms found in the server's outputs: ${total}.`,
    "",
    "| output | looked at | forms found | which |",
    "| --- | --- | --- | --- |",
    ...rows,
  ].join("\n");
}

if (import.meta.main) {
  const main = Deno.args[0];
  console.log(secretReport(await secretAttacks(main ? { main } : {})));
}
