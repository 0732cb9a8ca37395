import { SETTING_GROUPS, type Settings } from "./schema.js";
import type { Setting } from "./setting.js";
import { SettingsError, type SettingProblem } from "./settings-error.js";

/** An environment to decode: `process.env`, or a test's record. */
export type Environment = Readonly<Record<string, string | undefined>>;

/**
 * Decodes every setting of `env` at once: unset and empty variables take their defaults; a value
 * that does not decode is reported with its variable's name and what it expects. Throws a
 * {@link SettingsError} listing every problem.
 */
export function decodeSettings(env: Environment): Settings {
  const problems: SettingProblem[] = [];
  const decoded: Record<string, Record<string, unknown>> = {};
  for (const [groupKey, group] of SETTING_GROUPS) {
    const values: Record<string, unknown> = {};
    for (const [key, setting] of Object.entries(group.settings)) {
      const result = decodeOne(setting, env[setting.name]);
      if (result.ok) values[key] = result.value;
      else problems.push({ name: setting.name, message: result.message });
    }
    decoded[groupKey] = values;
  }
  if (problems.length > 0) throw new SettingsError(problems);
  return decoded as unknown as Settings;
}

type Decoded = { ok: true; value: unknown } | { ok: false; message: string };

function decodeOne(setting: Setting, raw: string | undefined): Decoded {
  const text = raw === undefined || raw.trim() === "" ? undefined : raw.trim();
  const parsed = setting.schema.safeParse(text);
  if (parsed.success) return { ok: true, value: parsed.data };
  // Only non-secret kinds can fail: every credential is free text.
  return {
    ok: false,
    message: `${setting.name} must be ${setting.expects}, got ${JSON.stringify(raw)}`,
  };
}
