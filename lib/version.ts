/** The server's name as MCP clients see it. */
export const SERVER_NAME = "opendata-mcp";

/** The server's version (kept in step with the release tag). */
export const VERSION = "0.1.0";

/** Where people can learn about the project or reach its maintainers. */
export const CONTACT_URL = "https://github.com/opendata-mcp/opendata-mcp";

/** The User-Agent sent upstream by default: Wikimedia and others reject generic agents. */
export const USER_AGENT = `${SERVER_NAME}/${VERSION} (+${CONTACT_URL})`;

/**
 * The User-Agent sent to every upstream: the project's name, version and URL, plus the operator's
 * contact (`server.operator_contact`) when one is set, as Wikimedia's User-Agent policy asks
 * (identified clients get far higher limits than anonymous ones).
 */
export function userAgent(operatorContact?: string | null): string {
  const contact = operatorContact?.trim();
  return contact ? `${SERVER_NAME}/${VERSION} (+${CONTACT_URL}; ${contact})` : USER_AGENT;
}
