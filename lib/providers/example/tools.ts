// The example tools, one file each in tools/ (the layout every provider follows).
export { echoTool } from "./tools/echo.ts";
export { pingTool } from "./tools/ping.ts";
