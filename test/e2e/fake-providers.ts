import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** One request a fake provider received. */
export interface ProviderRequest {
  method: string;
  path: string;
  headers: IncomingMessage["headers"];
  body: Record<string, unknown> | undefined;
}

/** One content block a scripted Anthropic reply holds: text, or a tool call. */
export type ScriptedBlock =
  | { type: "text"; text: string }
  | { type: "tool_use"; id: string; name: string; input: Record<string, unknown> };

/**
 * A scripted model: given a Messages API request body, the content of the reply, or undefined
 * for the fakes' default one-sentence answer. A reply with a tool call stops for `tool_use`.
 */
export type AnthropicScript = (body: Record<string, unknown>) => ScriptedBlock[] | undefined;

/** What the fakes answer with: the token counts of every reply. */
export const FAKE_USAGE = { input: 1200, cached: 200, output: 30 } as const;

/**
 * A loopback stand-in for the Anthropic Messages API (`POST /v1/messages`, streamed as the SDKs
 * expect: message_start … message_stop) and the OpenAI Responses API (`POST /v1/responses`,
 * streamed: response.created … response.completed with usage). Every request is recorded;
 * anything else (Claude Code's `HEAD /api/hello`, a model catalogue) gets a 404.
 */
export class FakeProviders {
  readonly requests: ProviderRequest[] = [];
  readonly #server = createServer((req, res) => this.#handle(req, res));

  /** `script` answers the Messages API's calls in place of the default answer. */
  constructor(private readonly script?: AnthropicScript) {}

  /** Starts listening on 127.0.0.1 and returns the base URL. */
  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.#server.listen(0, "127.0.0.1", resolve));
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  /** Stops listening and drops open connections. */
  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  /** The recorded model calls (not probes) to `path`. */
  calls(path: string): ProviderRequest[] {
    return this.requests.filter((request) => request.method === "POST" && request.path === path);
  }

  #handle(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      const path = new URL(req.url ?? "/", "http://fake").pathname;
      const body = text === "" ? undefined : (JSON.parse(text) as Record<string, unknown>);
      this.requests.push({ method: req.method ?? "", path, headers: req.headers, body });
      if (req.method === "POST" && path === "/v1/messages")
        return anthropic(res, body ?? {}, this.script);
      if (req.method === "POST" && path === "/v1/responses") return responses(res, body ?? {});
      res.writeHead(404, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { type: "not_found_error", message: `no ${path} here` } }));
    });
  }
}

type Events = [event: string, data: Record<string, unknown>][];

function sse(res: ServerResponse, events: Events): void {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  for (const [event, data] of events)
    res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  res.end();
}

const ANSWER = "Done: nothing needed changing.";

function anthropic(
  res: ServerResponse,
  body: Record<string, unknown>,
  script?: AnthropicScript,
): void {
  const usage = {
    input_tokens: FAKE_USAGE.input - FAKE_USAGE.cached,
    cache_read_input_tokens: FAKE_USAGE.cached,
    cache_creation_input_tokens: 0,
    output_tokens: FAKE_USAGE.output,
  };
  const message = {
    id: "msg_fake",
    type: "message",
    role: "assistant",
    model: body.model,
    content: [] as unknown[],
    stop_reason: null,
    stop_sequence: null,
    usage: { ...usage, output_tokens: 1 },
  };
  const content: ScriptedBlock[] = script?.(body) ?? [{ type: "text", text: ANSWER }];
  const stop_reason = content.some((block) => block.type === "tool_use") ? "tool_use" : "end_turn";
  if (body.stream !== true) {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ ...message, content, stop_reason, usage }));
    return;
  }
  sse(res, [
    ["message_start", { type: "message_start", message }],
    ...content.flatMap((block, index): Events => [
      [
        "content_block_start",
        {
          type: "content_block_start",
          index,
          content_block:
            block.type === "text" ? { type: "text", text: "" } : { ...block, input: {} },
        },
      ],
      [
        "content_block_delta",
        {
          type: "content_block_delta",
          index,
          delta:
            block.type === "text"
              ? { type: "text_delta", text: block.text }
              : { type: "input_json_delta", partial_json: JSON.stringify(block.input) },
        },
      ],
      ["content_block_stop", { type: "content_block_stop", index }],
    ]),
    [
      "message_delta",
      {
        type: "message_delta",
        delta: { stop_reason, stop_sequence: null },
        usage: { output_tokens: FAKE_USAGE.output },
      },
    ],
    ["message_stop", { type: "message_stop" }],
  ]);
}

function responses(res: ServerResponse, body: Record<string, unknown>): void {
  const item = {
    id: "msg_fake",
    type: "message",
    role: "assistant",
    status: "completed",
    content: [{ type: "output_text", text: ANSWER, annotations: [] }],
  };
  const response = {
    id: "resp_fake",
    object: "response",
    created_at: 1_700_000_000,
    model: body.model,
    status: "in_progress",
    output: [] as unknown[],
  };
  const usage = {
    input_tokens: FAKE_USAGE.input,
    input_tokens_details: { cached_tokens: FAKE_USAGE.cached },
    output_tokens: FAKE_USAGE.output,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: FAKE_USAGE.input + FAKE_USAGE.output,
  };
  const started = { ...item, status: "in_progress", content: [] };
  sse(res, [
    ["response.created", { type: "response.created", sequence_number: 0, response }],
    [
      "response.output_item.added",
      { type: "response.output_item.added", sequence_number: 1, output_index: 0, item: started },
    ],
    [
      "response.output_text.delta",
      {
        type: "response.output_text.delta",
        sequence_number: 2,
        item_id: item.id,
        output_index: 0,
        content_index: 0,
        delta: ANSWER,
      },
    ],
    [
      "response.output_item.done",
      { type: "response.output_item.done", sequence_number: 3, output_index: 0, item },
    ],
    [
      "response.completed",
      {
        type: "response.completed",
        sequence_number: 4,
        response: { ...response, status: "completed", output: [item], usage },
      },
    ],
  ]);
}
