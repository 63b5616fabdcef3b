import type { Provider, ProviderContext } from "../../mcp/provider.ts";
import { JobManager } from "../../output/jobs.ts";
import { fileResourceTemplate } from "../../output/resources.ts";
import { ProjectStorage } from "../../output/storage.ts";
import { FredClient, KEY_URL } from "./client.ts";
import { storageRoot } from "./storage_root.ts";

export { storageRoot } from "./storage_root.ts";
import type { FredSettings } from "./settings.ts";
import { registerResumers } from "./deliver.ts";
import { PROJECT_SUBDIRS } from "./project_fields.ts";
import { seriesSearch } from "./search.ts";
import { dataTools, FRED_TOOLSETS, jobTools, projectTools } from "./tools.ts";

/**
 * Creates the FRED provider: six data tools, three job tools, three project tools, file
 * resources and the series search of opendata_search. Without FRED_API_KEY only the project
 * tools are served: the others could only fail, and every agent would pay for listing them.
 */
export function createProvider(context: ProviderContext<FredSettings>): Provider {
  const { settings, logger, clock } = context;
  // The spec's check() warns about a key that looks wrong (fredSpec in config.ts).
  const keyed = settings.api_key !== "";

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
    logger,
    ...(context.quota ? { quota: context.quota } : {}),
    ...(context.secrets ? { secrets: context.secrets } : {}),
  });
  const jobs = new JobManager({
    clock,
    retentionMs: settings.job_retention_hours * 3_600_000,
    idPrefix: "fred-job",
    logger,
    ...(context.sharedJobs ? { shared: context.sharedJobs } : {}),
    ...(context.quota ? { quota: context.quota } : {}),
  });
  const deps = { settings, client, storage, jobs, clock, logger };
  registerResumers(deps);
  const data = dataTools(deps);
  const following = jobTools(jobs);
  const projects = projectTools(storage);
  const fix = `set FRED_API_KEY (a free key: ${KEY_URL}) and restart the server`;
  if (!keyed) {
    logger.warn(
      `FRED_API_KEY is not set: the FRED data and job tools (${
        [...data, ...following].map((t) => t.name).join(", ")
      }) are not served, only the project tools; to serve them, ${fix}`,
    );
  }
  return {
    id: "fred",
    tools: keyed ? [...data, ...following, ...projects] : projects,
    toolsets: FRED_TOOLSETS,
    ...(keyed ? { search: seriesSearch(client) } : {
      unavailable: [
        { toolset: "fred-data", tools: data.map((t) => t.name), reason: `FRED needs an API key: ${fix}` },
        {
          toolset: "fred-jobs",
          tools: following.map((t) => t.name),
          reason: `Jobs are started by the fred-data tools, which need an API key: ${fix}`,
        },
      ],
    }),
    resourceTemplates: [
      fileResourceTemplate(storage, {
        name: "fred-files",
        title: "FRED project files",
        description:
          'Files written by the FRED tools (output "file" and background jobs), by project and path: fred://files/{project}/{path}, e.g. fred://files/default/series/GNPCA_observations_20251008_143022.csv',
        maxBytes: Math.round(settings.resource_max_mb * 1_048_576),
      }),
    ],
    // A call run as a task (docs/MCP.md, "Tasks") follows the job it started to its end.
    jobs,
    close: () => jobs.close(),
  };
}
