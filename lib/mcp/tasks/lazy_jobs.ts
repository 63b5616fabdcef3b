// The task engine as a start sees it: nothing of it is loaded (its job manager, its schemas) until
// a client of the Tasks extension first uses it, so a start costs no more for it
// (docs/BENCHMARKS.md, "Start-up as users start it"). Its job manager, once made, follows the
// tasks of every replica through the shared store as before.
import type { TaskEngine } from "./engine.ts";
import type { TaskJobsOptions } from "./job_store.ts";
import type { TaskStore } from "./types.ts";

/** What {@linkcode lazyTaskJobs} hands out: the engine, and what stops its job manager. */
export interface TaskJobs {
  engine: TaskEngine;
  close(): Promise<void>;
}

/** The task engine of job_store.ts, made on its first use. */
export function lazyTaskJobs(options: TaskJobsOptions): TaskJobs {
  let made: Promise<TaskJobs> | undefined;
  const real = (): Promise<TaskJobs> => made ??= import("./job_store.ts").then((m) => m.taskJobs(options));
  const store: TaskStore = {
    createTask: async (o) => await (await real()).engine.store.createTask(o),
    getTask: async (id, owner) => await (await real()).engine.store.getTask(id, owner),
    updateTask: async (id, responses, owner) =>
      await (await real()).engine.store.updateTask(id, responses, owner),
    cancelTask: async (id, owner) => await (await real()).engine.store.cancelTask(id, owner),
  };
  return {
    engine: { store, start: async (tool) => await (await real()).engine.start(tool) },
    close: async () => {
      if (made) await (await made).close();
    },
  };
}
