/**
 * The provider proxy under a cost budget: exact prices, OpenAI's `n`, inputs it cannot bound,
 * the budget held from a DevBox's first request (before any agent command), reservations
 * taken atomically by parallel requests, and a refused model failing the command that asked.
 */
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import type { DevBoxEvent } from "../../../src/devbox/hub/events.js";
import { DevBoxHub } from "../../../src/devbox/hub/hub.js";
import { meterRequest, meteredEndpoint } from "../../../src/devbox/hub/provider-endpoints.js";
import { providerUpstreams } from "../../../src/devbox/hub/provider-proxy.js";
import { decodeSettings } from "../../../src/settings/index.js";
import { estimateCostUsd, priceOf } from "../../../src/workflow/model-prices.js";

/** Reserves `body` on `provider`'s `path` under a budget: the dollars, or the refusal. */
function reserve(provider: string, path: string, body: Record<string, unknown>, budgeted = true) {
  const endpoint = meteredEndpoint(provider, "POST", path);
  if (endpoint === undefined) throw new Error(path);
  const metered = meterRequest(provider, endpoint, Buffer.from(JSON.stringify(body)), budgeted);
  return "refused" in metered ? metered.refused : metered.reserveUsd;
}

describe("prices by exact model id", () => {
  it("prices o3-pro at its own rate, not o3's, and a dated snapshot at its alias's", () => {
    const usage = { inputTokens: 1_000_000, outputTokens: 1_000_000 };
    expect(estimateCostUsd("o3-pro", usage)).toBe(100);
    expect(estimateCostUsd("o3", usage)).toBe(10);
    expect(estimateCostUsd("claude-opus-4-1-20250805", usage)).toBe(90);
    expect(estimateCostUsd("claude-opus-4-1", usage)).toBe(90);
  });

  it("has no price for an id that only begins like a listed one", () => {
    for (const id of ["o3-pro-max", "claude-opus-4-1-2099", "gpt-5-codex-turbo", "o3x"]) {
      expect(priceOf(id), id).toBeUndefined();
      expect(reserve("openai", "/responses", { model: id, input: "hi" })).toMatchObject({
        status: 403,
        message: expect.stringMatching(/has no price/) as unknown,
      });
    }
    expect(typeof reserve("openai", "/responses", { model: "o3-pro", input: "hi" })).toBe("number");
  });

  it("bills Anthropic cache writes at their rate and a long prompt at its tier", () => {
    const writes = { inputTokens: 1_000_000, outputTokens: 0, cacheWriteTokens: 1_000_000 };
    expect(estimateCostUsd("claude-sonnet-4-5", writes)).toBe(3.75);
    expect(estimateCostUsd("claude-sonnet-4-5", { ...writes, cacheWrite1hTokens: 1_000_000 })).toBe(
      6,
    );
    expect(estimateCostUsd("claude-haiku-5-5", { inputTokens: 100_000, outputTokens: 0 })).toBe(
      0.01,
    );
    expect(estimateCostUsd("claude-haiku-5-5", { inputTokens: 200_000, outputTokens: 0 })).toBe(
      0.1,
    );
  });
});

describe("the reservation", () => {
  it("multiplies the output by OpenAI's n", () => {
    const body = { model: "gpt-5", messages: [], max_completion_tokens: 1000 };
    const one = reserve("openai", "/chat/completions", body) as number;
    const fifty = reserve("openai", "/chat/completions", { ...body, n: 50 }) as number;
    // The body is a few bytes longer with n: its input estimate moves by a few millionths.
    expect(fifty - one).toBeCloseTo((49 * 1000 * 10) / 1_000_000, 4);
    expect(reserve("openai", "/chat/completions", { ...body, n: 0 })).toMatchObject({
      status: 400,
    });
  });

  it("refuses, under a budget only, inputs whose size the body does not show", () => {
    const anthropic = (content: unknown, extra: Record<string, unknown> = {}) =>
      reserve("anthropic", "/v1/messages", {
        model: "claude-sonnet-4-5",
        max_tokens: 100,
        messages: [{ role: "user", content }],
        ...extra,
      });
    const refused = [
      anthropic([{ type: "document", source: { type: "url", url: "https://x.test/a.pdf" } }]),
      anthropic([{ type: "image", source: { type: "url", url: "https://x.test/a.png" } }]),
      anthropic([{ type: "image", source: { type: "file", file_id: "file_1" } }]),
      anthropic("hi", { tools: [{ type: "web_search_20250305", name: "web_search" }] }),
      anthropic("hi", { tools: [{ type: "code_execution_20250825", name: "code_execution" }] }),
      anthropic("hi", { mcp_servers: [{ type: "url", url: "https://x.test/mcp" }] }),
      reserve("openai", "/responses", {
        model: "gpt-5",
        input: "hi",
        tools: [{ type: "web_search" }],
      }),
      reserve("openai", "/responses", { model: "gpt-5", input: "hi", previous_response_id: "r1" }),
      reserve("openai", "/chat/completions", {
        model: "gpt-5",
        messages: [
          {
            role: "user",
            content: [{ type: "image_url", image_url: { url: "https://x.test/a.png" } }],
          },
        ],
      }),
    ];
    for (const refusal of refused) {
      expect(refusal).toMatchObject({
        status: 403,
        message: expect.stringMatching(/cannot bound/) as unknown,
      });
    }
    const unbudgeted = reserve(
      "anthropic",
      "/v1/messages",
      {
        model: "claude-sonnet-4-5",
        max_tokens: 100,
        messages: [],
        tools: [{ type: "web_search_20250305" }],
      },
      false,
    );
    expect(typeof unbudgeted).toBe("number");
    // The CLIs' own tools run on the client: bounded, forwarded.
    const client = anthropic("hi", {
      tools: [
        { name: "Bash", input_schema: {} },
        { type: "bash_20250124", name: "bash" },
      ],
    });
    expect(typeof client).toBe("number");
    const inline = anthropic([
      { type: "image", source: { type: "base64", media_type: "image/png", data: "AAAA" } },
    ]);
    expect(inline as number).toBeGreaterThan((client as number) + (9_000 * 6) / 1_000_000);
  });
});

/** A provider that holds every reply until `release` is called; counts what reached it. */
async function heldProvider() {
  const held: ServerResponse[] = [];
  const server = createServer((request, response) => {
    request.resume();
    request.on("end", () => held.push(response));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const usage = { input_tokens: 10, output_tokens: 1 };
  return {
    url,
    held,
    release: () => {
      for (const response of held.splice(0)) {
        response.writeHead(200, { "content-type": "application/json" });
        response.end(JSON.stringify({ type: "message", model: "claude-sonnet-4-5", usage }));
      }
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

let hub: DevBoxHub | undefined;
let upstream: Awaited<ReturnType<typeof heldProvider>> | undefined;
afterEach(async () => {
  upstream?.release();
  await hub?.close();
  await upstream?.close();
  hub = undefined;
  upstream = undefined;
});

/** A hub whose DevBox is registered with `budgetUsd` (as the claim gives it) and no command. */
async function budgetedDevBox(budgetUsd: number | undefined, events: DevBoxEvent[] = []) {
  upstream = await heldProvider();
  hub = new DevBoxHub({
    onEvent: (event) => events.push(event),
    maxProviderRequests: 16,
    providers: providerUpstreams(
      decodeSettings({ ANTHROPIC_API_KEY: "sk-ant-real", ANTHROPIC_BASE_URL: upstream.url })
        .providers,
    ),
  });
  await hub.listen();
  const { token } = hub.register({
    devboxId: "run1-box1",
    runId: "run1",
    ...(budgetUsd === undefined ? {} : { spend: { roomUsd: budgetUsd, countedUsd: 0 } }),
  });
  const env = hub.providerEnv("run1-box1", ["ANTHROPIC_API_KEY"]);
  const send = (model: string, maxTokens: number) =>
    fetch(`${env.ANTHROPIC_BASE_URL}/v1/messages`, {
      method: "POST",
      headers: { "x-api-key": env.ANTHROPIC_API_KEY ?? "", "content-type": "application/json" },
      body: JSON.stringify({ model, max_tokens: maxTokens, messages: [] }),
    });
  return { hub, token, send, upstream };
}

describe("the budget from a DevBox's first request", () => {
  it("holds a script's request (no agent command dispatched yet): unpriced and over-budget ones refused, one that fits forwarded", async () => {
    const { send, upstream } = await budgetedDevBox(0.01);
    const unpriced = await send("claude-opus-4-1-2099", 10);
    expect(unpriced.status).toBe(403);
    expect(await unpriced.text()).toMatch(/has no price/);
    // 100,000 output tokens of Sonnet are $1.50: more than the $0.01 left.
    const over = await send("claude-sonnet-4-5", 100_000);
    expect(over.status).toBe(402);
    expect(await over.text()).toMatch(/budget is spent/);
    expect(upstream.held).toHaveLength(0);
    const fits = send("claude-sonnet-4-5", 10);
    for (let tries = 0; upstream.held.length === 0 && tries < 400; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    upstream.release();
    expect((await fits).status).toBe(200);
  });

  it("forwards at most as many parallel requests as the budget's reservations cover", async () => {
    // Each request reserves 1,000 Sonnet output tokens ($0.015) and a little input: 2 fit.
    const { send, upstream } = await budgetedDevBox(0.035);
    const statuses: number[] = [];
    const sent = Array.from({ length: 8 }, () =>
      send("claude-sonnet-4-5", 1000).then((response) => {
        statuses.push(response.status);
        return response.text();
      }),
    );
    // Replies are held, so no reservation is settled while the others arrive.
    for (let tries = 0; statuses.length < 6 && tries < 400; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const forwarded = upstream.held.length;
    upstream.release();
    await Promise.all(sent);
    expect(forwarded).toBe(2);
    expect(statuses.sort()).toEqual([200, 200, 402, 402, 402, 402, 402, 402]);
  });

  it("without a budget forwards an unpriced model (nothing to hold it to)", async () => {
    const { send, upstream } = await budgetedDevBox(undefined);
    const reply = send("claude-opus-4-1-2099", 10);
    for (let tries = 0; upstream.held.length === 0 && tries < 400; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    upstream.release();
    expect((await reply).status).toBe(200);
  });
});

describe("a model the budget refuses", () => {
  it("fails the command that asked, with the reason, even when its CLI exits 0", async () => {
    const events: DevBoxEvent[] = [];
    const { hub, token, send } = await budgetedDevBox(5, events);
    hub.dispatch("run1-box1", {
      commandId: "c1",
      command: { type: "agent", argv: ["claude"], prompt: "p" },
      spendLimitUsd: 5,
    });
    expect((await send("claude-opus-4-1-2099", 10)).status).toBe(403);
    const post = (commandId: string) =>
      fetch(`${hub.url}/internal/devboxes/run1-box1/results`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}` },
        body: JSON.stringify({ commandId, exitCode: 0, output: "done", durationMs: 1 }),
      });
    expect((await post("c1")).status).toBe(200);
    const finished = events.filter((event) => event.type === "command.finished");
    expect(finished).toHaveLength(1);
    expect(finished[0]).toMatchObject({
      result: {
        commandId: "c1",
        exitCode: 1,
        refused: expect.stringMatching(/model "claude-opus-4-1-2099" has no price/) as unknown,
      },
    });
    // The reason goes with that command only: the next one is not failed by it.
    hub.dispatch("run1-box1", { commandId: "c2", command: { type: "script", script: "true" } });
    await post("c2");
    expect(events.filter((event) => event.type === "command.finished")[1]).toMatchObject({
      result: { commandId: "c2", exitCode: 0 },
    });
  });
});
