export { decodeSettings, type Environment } from "./decode.js";
export { ALL_SETTINGS, SETTING_GROUPS, SETTINGS_SCHEMA, type Settings } from "./schema.js";
export type { Reader, Setting, SettingGroup } from "./setting.js";
export { SettingsError, type SettingProblem } from "./settings-error.js";
