import * as nodePath from "node:path";
import type { Provider, ProviderContext } from "../../mcp/provider.ts";
import { JobManager } from "../../output/jobs.ts";
import { fileResourceTemplate } from "../../output/resources.ts";
import { ProjectStorage } from "../../output/storage.ts";
import { checkKeyFormat, FredClient } from "./client.ts";
import type { FredSettings } from "./config.ts";
import { registerResumers } from "./deliver.ts";
import { jobTools } from "./job_tools.ts";
import { PROJECT_SUBDIRS, projectTools } from "./project_tools.ts";
import { dataTools } from "./tools.ts";

/**
 * The storage root: FRED_STORAGE_DIR when set, else `<per-user data folder>/fred`. Seed 003
 * defaults to `./fred-data`, but a desktop client may start the server in any folder, even `/`.
 */
export function storageRoot(settings: FredSettings, dataDir: string): string {
  return settings.storage_dir !== "" ? settings.storage_dir : nodePath.join(dataDir, "fred");
}

/** Creates the FRED provider: six data tools, three job tools, three project tools, file resources. */
export function createProvider(context: ProviderContext<FredSettings>): Provider {
  const { settings, logger, clock } = context;
  // A doubtful key is worth a warning, never a failed start: the tools still list and explain.
  const warning = checkKeyFormat(settings.api_key);
  if (warning) logger.warn(warning);

  const client = new FredClient(settings, context.http);
  const storage = new ProjectStorage({
    root: storageRoot(settings, context.dataDir),
    subdirs: PROJECT_SUBDIRS,
    clock,
    uriPrefix: "fred://files/",
    settingName: "FRED_STORAGE_DIR",
    maxProjects: settings.max_projects,
    maxBytes: Math.round(settings.max_storage_mb * 1_048_576),
    limitSettings: { projects: "FRED_MAX_PROJECTS", bytes: "FRED_MAX_STORAGE_MB" },
  });
  const jobs = new JobManager({
    clock,
    retentionMs: settings.job_retention_hours * 3_600_000,
    idPrefix: "fred-job",
    logger,
    ...(context.sharedJobs ? { shared: context.sharedJobs } : {}),
  });
  const deps = { settings, client, storage, jobs, clock, logger };
  registerResumers(deps);
  return {
    id: "fred",
    tools: [...dataTools(deps), ...jobTools(jobs), ...projectTools(storage)],
    resourceTemplates: [
      fileResourceTemplate(storage, {
        name: "fred-files",
        title: "FRED project files",
        description:
          'Files written by the FRED tools (output "file" and background jobs), by project and path: fred://files/{project}/{path}, e.g. fred://files/default/series/GNPCA_observations_20251008_143022.csv',
        maxBytes: Math.round(settings.resource_max_mb * 1_048_576),
      }),
    ],
    close: () => jobs.close(),
  };
}
