// What callers may write (files, projects, jobs), as the operator chose with `server.writes`:
// - "on": as much as the storage and job limits allow, all callers together;
// - "off": nothing (a public read-only deployment): every write is refused with the way on;
// - "bounded": each caller (an OAuth user, a session, or a client address without a session)
//   keeps at most a few projects, megabytes and running jobs of its own.
// The storage and job managers enforce it where they write, so every tool that writes (and
// `output: "file"`) is covered without knowing any of them.
import { ToolError } from "../errors.ts";

/** The operator's choice; see the module comment. */
export interface WritePolicy {
  mode: "on" | "off" | "bounded";
  /** bounded: most projects one owner keeps. */
  maxProjectsPerOwner: number;
  /** bounded: most bytes one owner stores (4 KiB blocks, as the storage counts). */
  maxBytesPerOwner: number;
  /** bounded: most jobs one owner has running at once. */
  maxJobsPerOwner: number;
}

/** Writes allowed within the storage's own limits. */
export const WRITES_ON: WritePolicy = {
  mode: "on",
  maxProjectsPerOwner: Infinity,
  maxBytesPerOwner: Infinity,
  maxJobsPerOwner: Infinity,
};

/** The error of a write on a read-only deployment. */
export function writesOff(what: string): ToolError {
  return new ToolError(
    "CONFIGURATION_ERROR",
    `This server is read-only (MCP_WRITES=off): it does not ${what}`,
    {
      hint:
        'Ask for the answer inline (output: "inline", or leave output out) and narrow the request (fewer rows, a shorter date range) so it fits one answer',
    },
  );
}

/** The error of a write past a bounded caller's share. */
export function writesBounded(what: string, limit: string): ToolError {
  return new ToolError(
    "STORAGE_LIMIT",
    `Your share of this server is used up: ${what} (${limit} per client)`,
    {
      hint:
        "Delete or reuse what you have (list it with the project or job list tools), or wait for running jobs to end",
    },
  );
}
