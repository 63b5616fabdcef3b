// The test host page's script: frames a view the way MCP Apps hosts do, with ext-apps' own host
// side (AppBridge over PostMessageTransport). The HTML goes into a sandboxed iframe (scripts
// only, opaque origin) with the CSP its `_meta.ui.csp` asks for; tool calls and resource reads
// from the view go to the test's real MCP client through `hostCallTool` and `hostReadResource`,
// which the test exposes on the page. The host context (theme, style variables, display mode,
// container size) is the mount's, and `changeHostContext` sends host-context-changed.
// Bundled for the browser by tests/views/_browser.ts (deno bundle).
import { AppBridge, PostMessageTransport } from "@modelcontextprotocol/ext-apps/app-bridge";
import type { McpUiHostContext, McpUiResourceCsp } from "@modelcontextprotocol/ext-apps/app-bridge";

interface Mount {
  html: string;
  csp: McpUiResourceCsp | undefined;
  arguments: Record<string, unknown>;
  result: Record<string, unknown>;
  /** The host context sent in ui/initialize (default: light, inline, web). */
  hostContext?: McpUiHostContext;
  /** Whether the host passes the view's resources/read on to the server (default: yes). */
  serverResources?: boolean;
}

/** The bits of the DOM this page uses (typed here: the test suite is type-checked without the DOM lib). */
interface Frame {
  id: string;
  srcdoc: string;
  style: { cssText: string; height: string };
  contentWindow: unknown;
  setAttribute(name: string, value: string): void;
}
interface Doc {
  getElementById(id: string): { remove(): void } | null;
  createElement(tag: "iframe"): Frame;
  body: { appendChild(node: Frame): void };
}
const document = (globalThis as unknown as { document: Doc }).document;

/** What the page shares with the test (the test exposes `hostCallTool`). */
interface HostGlobals {
  hostCallTool(params: unknown): Promise<Record<string, unknown>>;
  hostReadResource(params: unknown): Promise<Record<string, unknown>>;
  mountView(mount: Mount): Promise<void>;
  /** Sends ui/notifications/host-context-changed to the mounted view. */
  changeHostContext(context: McpUiHostContext): void;
  openedLinks: string[];
  viewCalls: { name: string; arguments: unknown }[];
}
const host = globalThis as unknown as HostGlobals;

/** The CSP a host sets from `_meta.ui.csp` (the spec's restrictive default plus declared origins). */
function policy(csp: McpUiResourceCsp | undefined): string {
  const res = (csp?.resourceDomains ?? []).join(" ");
  const conn = (csp?.connectDomains ?? []).join(" ") || "'none'";
  return [
    "default-src 'none'",
    `script-src 'unsafe-inline' ${res}`,
    `style-src 'unsafe-inline' ${res}`,
    `img-src data: ${res}`,
    `font-src ${res || "'none'"}`,
    `media-src data: ${res}`,
    `connect-src ${conn}`,
    "frame-src 'none'",
    "object-src 'none'",
    "base-uri 'none'",
  ].join("; ");
}

host.openedLinks = [];
host.viewCalls = [];
let current: { bridge: AppBridge; context: McpUiHostContext } | undefined;
host.changeHostContext = (context) => {
  if (!current) return;
  current.context = { ...current.context, ...context };
  current.bridge.setHostContext(current.context);
};

host.mountView = async (mount: Mount): Promise<void> => {
  document.getElementById("view")?.remove();
  const iframe = document.createElement("iframe");
  iframe.id = "view";
  iframe.setAttribute("sandbox", "allow-scripts");
  iframe.style.cssText = "width:760px;height:420px;border:1px solid #ccc;border-radius:8px";
  const meta = `<meta http-equiv="Content-Security-Policy" content="${policy(mount.csp)}">`;
  iframe.srcdoc = mount.html.replace("<head>", `<head>${meta}`);
  document.body.appendChild(iframe);
  const context = mount.hostContext ?? { theme: "light", displayMode: "inline", platform: "web" };
  const bridge = new AppBridge(
    null,
    { name: "opendata-mcp-test-host", version: "1.0.0" },
    { serverTools: {}, openLinks: {}, ...(mount.serverResources === false ? {} : { serverResources: {} }) },
    { hostContext: context },
  );
  current = { bridge, context };
  bridge.onreadresource = async (params) => await host.hostReadResource(params) as never;
  bridge.oncalltool = async (params) => {
    host.viewCalls.push({ name: params.name, arguments: params.arguments });
    return await host.hostCallTool(params) as never;
  };
  bridge.onrequestdisplaymode = ({ mode }) => {
    const granted = context.availableDisplayModes?.includes(mode)
      ? mode
      : current!.context.displayMode ?? "inline";
    host.changeHostContext({ displayMode: granted });
    return Promise.resolve({ mode: granted });
  };
  bridge.onopenlink = ({ url }) => {
    host.openedLinks.push(url);
    return Promise.resolve({});
  };
  bridge.onsizechange = ({ height }) => {
    if (height) iframe.style.height = `${Math.min(height + 4, 900)}px`;
  };
  const initialized = new Promise<void>((resolve) => {
    bridge.oninitialized = () => {
      bridge.sendToolInput({ arguments: mount.arguments });
      bridge.sendToolResult(mount.result as never);
      resolve();
    };
  });
  await bridge.connect(
    new PostMessageTransport(iframe.contentWindow as never, iframe.contentWindow as never),
  );
  await initialized;
};
