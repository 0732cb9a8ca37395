import { describe, expect, it } from "vitest";
import { ALL_SETTINGS, decodeSettings, SettingsError } from "../../src/settings/index.js";

function problemsOf(env: Record<string, string>): string[] {
  try {
    decodeSettings(env);
  } catch (error) {
    if (error instanceof SettingsError) return error.problems.map((problem) => problem.message);
    throw error;
  }
  throw new Error("decoded");
}

describe("decodeSettings", () => {
  it("gives every default when nothing is set", () => {
    const settings = decodeSettings({});
    expect(settings.githubApp.ackDeadlineMs).toBe(5000);
    expect(settings.githubApp.webhookPath).toBe("/api/github/webhooks");
    expect(settings.githubApp.maxWebhookBytes).toBe(5 * 1024 * 1024);
    expect(settings.githubApp.prReady).toBe("on-success");
    expect(settings.githubApp.scorecardRepos).toEqual([]);
    expect(settings.devboxes.lapseMs).toBe(15_000);
    expect(settings.devboxes.leaseMs).toBe(15_000);
    expect(settings.devboxes.executor).toBe("local");
    expect(settings.store.dynamodbTable).toBe("clustercode");
    expect(settings.store.dynamodbEndpoint).toBeUndefined();
    expect(settings.providers.providerRequests).toBe(4);
  });

  it("reads an empty variable as unset", () => {
    const settings = decodeSettings({ CLUSTERCODE_DEVBOX_LAPSE_MS: "", PORT: "  " });
    expect(settings.devboxes.lapseMs).toBe(15_000);
    expect(settings.githubApp.port).toBe(3000);
  });

  it("decodes numbers, lists and JSON arrays", () => {
    const settings = decodeSettings({
      CLUSTERCODE_ACK_DEADLINE_MS: "250",
      CLUSTERCODE_SCORECARD_REPOS: "octo/a, octo/b,",
      CLUSTERCODE_SETUP: '["npm ci"]',
      CLUSTERCODE_UNSAFE_LOCAL_DEVBOX: "1",
    });
    expect(settings.githubApp.ackDeadlineMs).toBe(250);
    expect(settings.githubApp.scorecardRepos).toEqual(["octo/a", "octo/b"]);
    expect(settings.agent.setup).toEqual(["npm ci"]);
    expect(settings.devboxes.unsafeLocalDevBox).toBe(true);
  });

  it("names the variable, what it expects and what it got", () => {
    expect(problemsOf({ CLUSTERCODE_DEVBOX_LAPSE_MS: "soon" })).toEqual([
      'CLUSTERCODE_DEVBOX_LAPSE_MS must be a positive whole number of milliseconds, got "soon"',
    ]);
    expect(problemsOf({ CLUSTERCODE_PR_READY: "always" })).toEqual([
      'CLUSTERCODE_PR_READY must be one of `on-success`, `never`, got "always"',
    ]);
    expect(problemsOf({ PORT: "99999" })).toEqual([
      'PORT must be a whole number from 1 to 65535, got "99999"',
    ]);
  });

  it("reports every bad variable at once", () => {
    const problems = problemsOf({
      CLUSTERCODE_ACK_DEADLINE_MS: "0",
      CLUSTERCODE_SETUP: "npm ci",
      CLUSTERCODE_DYNAMODB_ENDPOINT: "localhost:8000",
    });
    expect(problems).toHaveLength(3);
    expect(problems.join("\n")).toMatch(/CLUSTERCODE_ACK_DEADLINE_MS must be a positive/);
    expect(problems.join("\n")).toMatch(/CLUSTERCODE_SETUP must be a JSON array of strings/);
    expect(problems.join("\n")).toMatch(/CLUSTERCODE_DYNAMODB_ENDPOINT must be an http\(s\) URL/);
  });

  it("lists each variable once, with a description and its readers", () => {
    const names = ALL_SETTINGS.map((setting) => setting.name);
    expect(new Set(names).size).toBe(names.length);
    for (const setting of ALL_SETTINGS) {
      expect(setting.description, setting.name).not.toBe("");
      expect(setting.readers.length, setting.name).toBeGreaterThan(0);
      // A credential never fails to decode, so its value never reaches an error message.
      if (setting.secret === true) expect(setting.expects, setting.name).toBe("text");
    }
  });
});
