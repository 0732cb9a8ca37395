import { request as httpRequest } from "node:http";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { estimateCostUsd } from "../../../src/workflow/model-prices.js";
import { DevBoxHub } from "../../../src/devbox/hub/hub.js";
import { providerUpstreams } from "../../../src/devbox/hub/provider-proxy.js";
import { decodeSettings } from "../../../src/settings/index.js";
import { FAKE_USAGE, FakeProviders } from "../../e2e/fake-providers.js";

const REAL_ANTHROPIC = "sk-ant-real-key-that-stays-in-the-hub";
const REAL_OPENAI = "sk-openai-real-key-that-stays-in-the-hub";
const SECRETS = ["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GITHUB_TOKEN"];

const providers = new FakeProviders();
let upstream: string;
beforeAll(async () => {
  upstream = await providers.listen();
});
afterAll(() => providers.close());

let hub: DevBoxHub | undefined;
afterEach(async () => {
  await hub?.close();
  hub = undefined;
});

/** A hub holding both providers' real keys, with one DevBox given its placeholders. */
async function setup() {
  hub = new DevBoxHub({
    onEvent: () => {},
    providers: providerUpstreams(
      decodeSettings({
        ANTHROPIC_API_KEY: REAL_ANTHROPIC,
        ANTHROPIC_BASE_URL: upstream,
        OPENAI_API_KEY: REAL_OPENAI,
        OPENAI_BASE_URL: `${upstream}/v1`,
      }).providers,
    ),
  });
  await hub.listen();
  hub.register({ devboxId: "run1-box1", runId: "run1" });
  const env = hub.providerEnv("run1-box1", SECRETS);
  const messages = (stream: boolean, key = env.ANTHROPIC_API_KEY ?? "") =>
    fetch(`${env.ANTHROPIC_BASE_URL}/v1/messages`, {
      method: "POST",
      headers: { "x-api-key": key, "content-type": "application/json" },
      body: JSON.stringify({ model: "claude-sonnet-4-5", stream, max_tokens: 10, messages: [] }),
    });
  return { hub, env, messages };
}

/** A GET of `url` sent with its path exactly as written. */
function rawGet(url: string, key: string): Promise<number> {
  const { host, pathname } = new URL(url.replace(/\/(\.\.|http:).*$/, ""));
  const path = pathname + url.slice(url.indexOf(pathname) + pathname.length);
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      {
        host: host.split(":")[0],
        port: host.split(":")[1],
        path,
        headers: { authorization: `Bearer ${key}` },
      },
      (response) => {
        response.resume();
        resolve(response.statusCode ?? 0);
      },
    );
    request.on("error", reject);
    request.end();
  });
}

const priceOfOneReply = estimateCostUsd("claude-sonnet-4-5", {
  inputTokens: FAKE_USAGE.input,
  outputTokens: FAKE_USAGE.output,
  cachedInputTokens: FAKE_USAGE.cached,
})!;

describe("the hub's provider proxy", () => {
  it("gives a DevBox a placeholder key and the hub's URL for each provider key it lists", async () => {
    const { env } = await setup();
    expect(Object.keys(env).sort()).toEqual([
      "ANTHROPIC_API_KEY",
      "ANTHROPIC_BASE_URL",
      "OPENAI_API_KEY",
      "OPENAI_BASE_URL",
    ]);
    expect(env.ANTHROPIC_API_KEY).toMatch(/^clustercode-[0-9a-f]{48}$/);
    expect(env.ANTHROPIC_BASE_URL).toBe(
      `${hub!.url}/internal/devboxes/run1-box1/providers/anthropic`,
    );
    expect(JSON.stringify(env)).not.toContain(REAL_ANTHROPIC);
    expect(JSON.stringify(env)).not.toContain(REAL_OPENAI);
    expect(hub!.providerEnv("run1-box1", ["GITHUB_TOKEN"])).toEqual({});
  });

  it("forwards a streamed request with the real key and passes the events back unchanged", async () => {
    const { messages } = await setup();
    const before = providers.calls("/v1/messages").length;
    const response = await messages(true);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toContain("text/event-stream");
    const text = await response.text();
    expect(text).toContain("event: message_start");
    expect(text).toContain("event: message_stop");
    const [call] = providers.calls("/v1/messages").slice(before);
    expect(call?.headers["x-api-key"]).toBe(REAL_ANTHROPIC);
    expect(call?.body).toMatchObject({ model: "claude-sonnet-4-5", stream: true });
  });

  it("sends OpenAI's key as a bearer token when the DevBox sends its placeholder that way", async () => {
    const { env } = await setup();
    const before = providers.calls("/v1/responses").length;
    const response = await fetch(`${env.OPENAI_BASE_URL}/responses`, {
      method: "POST",
      headers: { authorization: `Bearer ${env.OPENAI_API_KEY}` },
      body: JSON.stringify({ model: "gpt-5-mini", stream: true, input: "hi" }),
    });
    expect(response.status).toBe(200);
    expect(await response.text()).toContain("response.completed");
    const [call] = providers.calls("/v1/responses").slice(before);
    expect(call?.headers.authorization).toBe(`Bearer ${REAL_OPENAI}`);
  });

  it("refuses a wrong key, another DevBox's key, a released DevBox and a provider it holds no key for", async () => {
    const { env, messages } = await setup();
    hub!.register({ devboxId: "run2-box1", runId: "run2" });
    const other = hub!.providerEnv("run2-box1", SECRETS);
    const before = providers.requests.length;
    expect((await messages(false, "sk-ant-guess")).status).toBe(401);
    expect((await messages(false, other.ANTHROPIC_API_KEY)).status).toBe(401);
    const unknownProvider = await fetch(
      `${hub!.url}/internal/devboxes/run1-box1/providers/google/v1/models`,
      { headers: { "x-api-key": env.ANTHROPIC_API_KEY ?? "" } },
    );
    expect(unknownProvider.status).toBe(404);
    // Paths that resolve outside the provider's base (fetch would normalise them, so raw).
    for (const path of ["/../elsewhere", "/http://elsewhere.example/v1/x"]) {
      const status = await rawGet(`${env.OPENAI_BASE_URL}${path}`, env.OPENAI_API_KEY ?? "");
      expect(status, path).toBe(403);
    }
    hub!.release("run1-box1");
    expect((await messages(false)).status).toBe(401);
    expect(providers.requests.length).toBe(before);
  });

  it("refuses an agent command's requests once their replies cost what was left of the run's budget", async () => {
    const { messages } = await setup();
    hub!.dispatch("run1-box1", {
      commandId: "c1",
      command: { type: "agent", argv: ["claude"], prompt: "work" },
      spendLimitUsd: priceOfOneReply * 1.5,
    });
    const before = providers.calls("/v1/messages").length;
    expect((await messages(true)).status).toBe(200);
    expect((await messages(false)).status).toBe(200);
    const refused = await messages(true);
    expect(refused.status).toBe(402);
    const body = (await refused.json()) as { error: { type: string; message: string } };
    expect(body.error.type).toBe("billing_error");
    expect(body.error.message).toMatch(/the run's budget is spent/);
    expect(providers.calls("/v1/messages").length - before).toBe(2);

    // The next agent command starts from what its dispatch says is left, less the proxied
    // spend that dispatch does not count yet.
    hub!.dispatch("run1-box1", {
      commandId: "c2",
      command: { type: "agent", argv: ["claude"], prompt: "more" },
      spendLimitUsd: priceOfOneReply * 10,
    });
    expect((await messages(false)).status).toBe(200);
  });
});
