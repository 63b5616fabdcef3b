// What the project tools share: the folders of a project and the project_name field.
import { text } from "./params.ts";

/** The folders every FRED project gets, one per kind of data (docs/apis/fred.md). */
export const PROJECT_SUBDIRS = ["series", "maps", "releases", "categories", "sources", "tags"] as const;

/** The project tools reach nothing outside the server. */
export const LOCAL = { openWorldHint: false } as const;

/** The `project_name` input field. */
export const projectName = text(200).describe("Project name");
