import type { z } from "zod";
import { agent } from "./groups/agent.js";
import { devboxes } from "./groups/devboxes.js";
import { diagnostics } from "./groups/diagnostics.js";
import { ecs } from "./groups/ecs.js";
import { githubApp } from "./groups/github-app.js";
import { providers } from "./groups/providers.js";
import { runPages } from "./groups/run-pages.js";
import { store } from "./groups/store.js";
import { telemetry } from "./groups/telemetry.js";
import type { Setting, SettingGroup } from "./setting.js";

/**
 * Every environment variable the app, the CLI and the DevBox agent read, by concern: the one
 * source of the decoded {@link Settings} and of docs/configuration.md.
 */
export const SETTINGS_SCHEMA = {
  githubApp,
  store,
  runPages,
  providers,
  devboxes,
  ecs,
  agent,
  telemetry,
  diagnostics,
} satisfies Record<string, SettingGroup>;

type Schema = typeof SETTINGS_SCHEMA;

/** The decoded settings: one typed value per variable, defaults applied, grouped by concern. */
export type Settings = {
  readonly [G in keyof Schema]: {
    readonly [K in keyof Schema[G]["settings"]]: Schema[G]["settings"][K] extends Setting<infer T>
      ? z.output<T>
      : never;
  };
};

/** The groups with their keys, as plain {@link SettingGroup}s, in the schema's order. */
export const SETTING_GROUPS: readonly (readonly [string, SettingGroup])[] =
  Object.entries(SETTINGS_SCHEMA);

/** Every setting, in the schema's order. */
export const ALL_SETTINGS: readonly Setting[] = SETTING_GROUPS.flatMap(([, group]) =>
  Object.values(group.settings),
);
