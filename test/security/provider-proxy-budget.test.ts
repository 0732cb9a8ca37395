// The hub's provider proxy holds the run's money: it is tested over loopback, the real hub in
// front of a fake provider on 127.0.0.1 that bills every reply at its worst case (its output
// cap, and a token per 4 bytes of request), as a real provider could.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { estimateCostUsd } from "../../src/workflow/model-prices.js";
import type { CommandResult } from "../../src/engine/commands.js";
import type { Effect } from "../../src/engine/model.js";
import { renderStatusComment } from "../../src/github/surfaces/render-status.js";
import { DevBoxHub } from "../../src/devbox/hub/hub.js";
import type { DevBoxEvent } from "../../src/devbox/hub/events.js";
import { providerUpstreams } from "../../src/devbox/hub/provider-proxy.js";
import { decodeSettings } from "../../src/settings/index.js";
import { SimulatedRun, definitionOf, workflowOf } from "../engine/harness.js";

const REAL_ANTHROPIC = "sk-ant-real-key-budget-test";
const REAL_OPENAI = "sk-openai-real-key-budget-test";
const SECRETS = ["ANTHROPIC_API_KEY", "OPENAI_API_KEY"];
const MODEL = "claude-sonnet-4-5";

interface Billed {
  path: string;
  headers: IncomingMessage["headers"];
  body: Record<string, unknown> | undefined;
  costUsd: number;
}

/** A provider that holds its replies while `holding`, and records what it billed. */
class BillingProvider {
  readonly received: Billed[] = [];
  holding = false;
  #held: (() => void)[] = [];
  readonly #server = createServer((req, res) => this.#handle(req, res));

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.#server.listen(0, "127.0.0.1", resolve));
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  close(): Promise<void> {
    this.#server.closeAllConnections();
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }

  release(): void {
    this.holding = false;
    for (const reply of this.#held.splice(0)) reply();
  }

  /** What the requests since the `from`th cost. */
  billedUsd(from = 0): number {
    return this.received.slice(from).reduce((sum, request) => sum + request.costUsd, 0);
  }

  #handle(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const raw = Buffer.concat(chunks);
      const body = raw.length === 0 ? undefined : (JSON.parse(raw.toString()) as Billed["body"]);
      const path = new URL(req.url ?? "/", "http://fake").pathname;
      const model = typeof body?.model === "string" ? body.model : "";
      const cap = body?.max_tokens ?? body?.max_output_tokens;
      const usage = {
        inputTokens: Math.ceil(raw.length / 4),
        outputTokens: typeof cap === "number" ? cap : 64_000,
      };
      const costUsd = path === "/v1/messages" ? (estimateCostUsd(model, usage) ?? 0) : 0;
      this.received.push({ path, headers: req.headers, body, costUsd });
      const reply = () => answer(res, path, body?.stream === true, usage);
      if (this.holding) this.#held.push(reply);
      else reply();
    });
  }
}

function answer(
  res: ServerResponse,
  path: string,
  stream: boolean,
  usage: { inputTokens: number; outputTokens: number },
): void {
  const anthropicUsage = { input_tokens: usage.inputTokens, output_tokens: usage.outputTokens };
  if (path === "/v1/responses") {
    res.writeHead(200, { "content-type": "application/json" });
    const openaiUsage = { input_tokens: usage.inputTokens, output_tokens: usage.outputTokens };
    return void res.end(JSON.stringify({ id: "resp", status: "completed", usage: openaiUsage }));
  }
  if (!stream) {
    res.writeHead(200, { "content-type": "application/json" });
    return void res.end(JSON.stringify({ type: "message", usage: anthropicUsage }));
  }
  res.writeHead(200, { "content-type": "text/event-stream" });
  const start = {
    type: "message_start",
    message: { usage: { ...anthropicUsage, output_tokens: 1 } },
  };
  res.write(`event: message_start\ndata: ${JSON.stringify(start)}\n\n`);
  const delta = { type: "message_delta", usage: { output_tokens: usage.outputTokens } };
  res.write(`event: message_delta\ndata: ${JSON.stringify(delta)}\n\n`);
  res.end(`event: message_stop\ndata: {"type":"message_stop"}\n\n`);
}

const provider = new BillingProvider();
let upstream: string;
beforeAll(async () => {
  upstream = await provider.listen();
});
afterAll(() => provider.close());

let hub: DevBoxHub | undefined;
const events: DevBoxEvent[] = [];
afterEach(async () => {
  provider.release();
  await hub?.close();
  hub = undefined;
  events.length = 0;
});

/** A hub holding both real keys; `boxes` of run `run1` get their placeholders. */
async function setup(options: { maxProviderRequests?: number; boxes?: string[] } = {}) {
  hub = new DevBoxHub({
    onEvent: (event) => events.push(event),
    providers: providerUpstreams(
      decodeSettings({
        ANTHROPIC_API_KEY: REAL_ANTHROPIC,
        ANTHROPIC_BASE_URL: upstream,
        OPENAI_API_KEY: REAL_OPENAI,
        OPENAI_BASE_URL: `${upstream}/v1`,
      }).providers,
    ),
    ...(options.maxProviderRequests === undefined
      ? {}
      : { maxProviderRequests: options.maxProviderRequests }),
  });
  await hub.listen();
  const boxes: Record<string, { token: string; env: Record<string, string> }> = {};
  for (const box of options.boxes ?? ["run1-box1"]) {
    const { token } = hub.register({ devboxId: box, runId: "run1" });
    boxes[box] = { token, env: hub.providerEnv(box, SECRETS) };
  }
  return boxes;
}

/** An Anthropic Messages call from a DevBox with its placeholder key. */
function messages(env: Record<string, string>, body: Record<string, unknown> = {}) {
  return fetch(`${env.ANTHROPIC_BASE_URL}/v1/messages?beta=true`, {
    method: "POST",
    headers: { "x-api-key": env.ANTHROPIC_API_KEY ?? "", "content-type": "application/json" },
    body: JSON.stringify({
      model: MODEL,
      max_tokens: 1000,
      stream: true,
      messages: [{ role: "user", content: "Fix the bug." }],
      ...body,
    }),
  });
}

function agent(commandId: string, spendLimitUsd?: number, proxiedUsd?: number) {
  return {
    commandId,
    command: { type: "agent" as const, argv: ["claude"], prompt: "work" },
    ...(spendLimitUsd === undefined ? {} : { spendLimitUsd }),
    ...(proxiedUsd === undefined ? {} : { proxiedUsd }),
  };
}

/** Waits (bounded) until `done` holds. */
async function until(done: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !done(); i++) await new Promise((r) => setTimeout(r, 10));
  expect(done()).toBe(true);
}

/** Posts a command's result as the DevBox's agent does, and returns what the hub reported. */
async function postResult(box: string, token: string, result: CommandResult) {
  const response = await fetch(`${hub!.url}/internal/devboxes/${box}/results`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify(result),
  });
  expect(response.status).toBe(200);
  const event = events.find(
    (candidate) =>
      candidate.type === "command.finished" && candidate.result.commandId === result.commandId,
  );
  if (event?.type !== "command.finished") throw new Error("no command.finished reported");
  return event.result;
}

const BUDGET = 0.05;

describe("the provider proxy holds the run's budget", () => {
  it("8 parallel requests on a small budget: what the provider bills never exceeds it, the rest are refused 402 before they reach it", async () => {
    const { "run1-box1": box } = await setup({ maxProviderRequests: 8 });
    hub!.dispatch("run1-box1", agent("c1", BUDGET));
    provider.holding = true;
    const before = provider.received.length;
    const statuses: number[] = [];
    const replies = Array.from({ length: 8 }, async () => {
      const response = await messages(box!.env);
      const text = await response.text();
      statuses.push(response.status);
      return { status: response.status, text };
    });
    // All 8 are in flight at once: each reached the provider (held) or was refused.
    await until(() => provider.received.length - before + statuses.length === 8);
    provider.release();
    const answered = await Promise.all(replies);
    const billed = provider.received.slice(before);
    expect(billed.length).toBeGreaterThan(0);
    expect(billed.length).toBeLessThan(8);
    expect(provider.billedUsd(before)).toBeLessThanOrEqual(BUDGET);
    const refused = answered.filter((reply) => reply.status !== 200);
    expect(refused.length).toBe(8 - billed.length);
    for (const reply of refused) {
      expect(reply.status).toBe(402);
      const error = JSON.parse(reply.text) as {
        type: string;
        error: { type: string; message: string };
      };
      expect(error.error.type).toBe("billing_error");
      expect(error.error.message).toMatch(/the run's budget is spent/);
    }
  });

  it("caps the requests a DevBox has in flight: the excess gets 429 with retry-after", async () => {
    const { "run1-box1": box } = await setup({ maxProviderRequests: 2 });
    provider.holding = true;
    const before = provider.received.length;
    const early: Response[] = [];
    const replies = Array.from({ length: 4 }, async () => {
      const response = await messages(box!.env);
      early.push(response);
      return response;
    });
    // Two are held by the provider; the other two are answered at once.
    await until(() => provider.received.length - before === 2 && early.length === 2);
    expect(early.map((response) => response.status)).toEqual([429, 429]);
    provider.release();
    const all = await Promise.all(replies);
    const limited = all.filter((response) => response.status === 429);
    expect(limited).toHaveLength(2);
    for (const response of limited) expect(response.headers.get("retry-after")).toBe("1");
    expect(provider.received.length - before).toBe(2);
    expect((await messages(box!.env)).status).toBe(200);
  });

  it("carries the allowance across the run's commands and DevBoxes: a later dispatch does not renew it, and the spend is reported with the command's result", async () => {
    const boxes = await setup({ boxes: ["run1-box1", "run1-box2"] });
    const first = boxes["run1-box1"]!;
    const second = boxes["run1-box2"]!;
    hub!.dispatch("run1-box1", agent("c1", BUDGET));
    const before = provider.received.length;
    expect((await messages(first.env)).status).toBe(200);
    expect((await messages(first.env)).status).toBe(200);
    const spent = provider.billedUsd(before);
    // The agent says it spent nothing; the hub reports what its proxy counted.
    const result = await postResult("run1-box1", first.token, {
      commandId: "c1",
      exitCode: 0,
      output: "done",
      durationMs: 5,
      costUsd: 0,
    });
    expect(result.proxiedCostUsd).toBeCloseTo(spent, 6);
    expect(result.costUsd).toBeCloseTo(spent, 6);
    // Another agent command, on another DevBox of the run, dispatched before the engine counted
    // that spend: its room is the whole budget again, but the proxy still subtracts it.
    hub!.dispatch("run1-box2", agent("c2", BUDGET));
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await messages(second.env)).status);
    expect(statuses).toEqual([200, 402, 402, 402]);
    expect(provider.billedUsd(before)).toBeLessThanOrEqual(BUDGET);
    expect(provider.received.length - before).toBe(3);
  });

  it("forwards only the metered endpoints: batches, files, models and organisations are refused and never see the key", async () => {
    const { "run1-box1": box } = await setup();
    const env = box!.env;
    const before = provider.received.length;
    const anthropic = (method: string, path: string) =>
      fetch(`${env.ANTHROPIC_BASE_URL}${path}`, {
        method,
        headers: { "x-api-key": env.ANTHROPIC_API_KEY ?? "", "content-type": "application/json" },
        ...(method === "GET" ? {} : { body: JSON.stringify({ model: MODEL, requests: [] }) }),
      });
    const openai = (method: string, path: string) =>
      fetch(`${env.OPENAI_BASE_URL}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${env.OPENAI_API_KEY}`,
          "content-type": "application/json",
        },
        ...(method === "GET" ? {} : { body: JSON.stringify({ model: "gpt-5-mini" }) }),
      });
    const refused = [
      await anthropic("POST", "/v1/messages/batches"),
      await anthropic("GET", "/v1/messages/batches"),
      await anthropic("GET", "/v1/models"),
      await anthropic("POST", "/v1/files"),
      await anthropic("GET", "/v1/organizations/me"),
      await anthropic("GET", "/v1/messages"),
      await openai("POST", "/batches"),
      await openai("POST", "/files"),
      await openai("GET", "/models"),
      await openai("GET", "/organization/costs"),
      await openai("POST", "/embeddings"),
    ];
    for (const response of refused) {
      expect(response.status, response.url).toBe(403);
      const body = (await response.json()) as { error: { message: string } };
      expect(body.error.message).toMatch(/the proxy forwards only model calls/);
    }
    expect(provider.received.length).toBe(before);
    // The metered ones go through, with the real key.
    expect((await messages(env)).status).toBe(200);
    const counted = await fetch(`${env.ANTHROPIC_BASE_URL}/v1/messages/count_tokens`, {
      method: "POST",
      headers: { "x-api-key": env.ANTHROPIC_API_KEY ?? "" },
      body: JSON.stringify({ model: MODEL, messages: [] }),
    });
    expect(counted.status).toBe(200);
    const responses = await openai("POST", "/responses");
    expect(responses.status).toBe(200);
    const forwarded = provider.received.slice(before);
    expect(forwarded.map((request) => request.path)).toEqual([
      "/v1/messages",
      "/v1/messages/count_tokens",
      "/v1/responses",
    ]);
    expect(forwarded[0]?.headers["x-api-key"]).toBe(REAL_ANTHROPIC);
    expect(forwarded[2]?.headers.authorization).toBe(`Bearer ${REAL_OPENAI}`);
  });

  it("refuses a model with no price while a cost budget applies, and caps a request that names no output limit", async () => {
    const { "run1-box1": box } = await setup();
    const before = provider.received.length;
    // Without a budget an unpriced model is forwarded.
    expect((await messages(box!.env, { model: "my-fine-tune" })).status).toBe(200);
    hub!.dispatch("run1-box1", agent("c1", BUDGET));
    const unpriced = await messages(box!.env, { model: "my-fine-tune" });
    expect(unpriced.status).toBe(403);
    expect(((await unpriced.json()) as { error: { message: string } }).error.message).toMatch(
      /model "my-fine-tune" has no price, so a run with a cost budget cannot use it/,
    );
    expect(provider.received.length - before).toBe(1);
    hub!.dispatch("run1-box1", agent("c2", 5));
    const uncapped = await fetch(`${box!.env.OPENAI_BASE_URL}/responses`, {
      method: "POST",
      headers: { authorization: `Bearer ${box!.env.OPENAI_API_KEY}` },
      body: JSON.stringify({ model: "gpt-5-mini", input: "hi" }),
    });
    expect(uncapped.status).toBe(200);
    expect(provider.received.at(-1)?.body).toMatchObject({ max_output_tokens: 32_000 });
  });
});

describe("proxied spend in the run", () => {
  it("the run's cost, its evidence and its status comment count what the proxy counted, though the agent reported nothing", async () => {
    const { "run1-box1": box } = await setup();
    const workflow = workflowOf(`version: 1
name: proxied
on: { label: go }
budget: { max_cost_usd: ${BUDGET} }
nodes:
  work: { kind: run, prompt: Work., agent: { engine: claude, model: ${MODEL} } }
`);
    const definition = definitionOf(workflow);
    const isAgent = (effect: Effect) =>
      effect.type === "command.dispatch" && effect.request.command.type === "agent";
    const sim = new SimulatedRun(definition, { pause: isAgent }).start();
    const dispatch = sim.effects.find(isAgent);
    if (dispatch?.type !== "command.dispatch") throw new Error("no agent dispatch");
    expect(dispatch.request.spendLimitUsd).toBe(BUDGET);
    // The engine's dispatch goes to the real hub; the agent spends through the proxy.
    hub!.dispatch("run1-box1", dispatch.request);
    const before = provider.received.length;
    expect((await messages(box!.env)).status).toBe(200);
    const spent = provider.billedUsd(before);
    expect(spent).toBeGreaterThan(0.01);
    const result = await postResult("run1-box1", box!.token, {
      commandId: dispatch.request.commandId,
      exitCode: 0,
      output: "done",
      durationMs: 5,
    });
    sim.send({ type: "command.finished", devboxId: dispatch.devboxId, result, at: sim.tick() });
    sim.drain();
    expect(sim.snapshot.costUsd).toBeCloseTo(spent, 6);
    expect(sim.snapshot.proxiedUsd).toBeCloseTo(spent, 6);
    const finished = sim.effects.flatMap((effect) =>
      effect.type === "evidence" && effect.entry.kind === "command.finished" ? [effect.entry] : [],
    );
    expect(finished[0]).toMatchObject({ costUsd: result.costUsd, proxiedCostUsd: result.costUsd });
    expect(renderStatusComment(definition, sim.snapshot)).toContain(`cost $${spent.toFixed(2)}`);
    expect(spent.toFixed(2)).not.toBe("0.00");
  });
});
