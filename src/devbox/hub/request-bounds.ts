/**
 * What in a provider request body bills beyond its bytes: inputs whose size the proxy cannot
 * see (a document or image fetched by URL or named by file id, a stored conversation, a remote
 * MCP server, a server-side tool such as web search or code execution) and the fixed
 * allowances of inline images and PDFs, whose tokens do not follow their bytes.
 */
export interface RequestBounds {
  /** Why the request cannot be bounded, when it cannot: the first unbounded input found. */
  unbounded?: string;
  /** Input tokens the inline images and PDFs may bill on top of the body's size estimate. */
  extraInputTokens: number;
}

/** The most tokens one inline image bills (providers resize; the largest bill is a few thousand). */
export const IMAGE_TOKENS_MAX = 10_000;
/** The most tokens one inline PDF bills: the providers' 100-page limit at 5,000 tokens a page. */
export const PDF_TOKENS_MAX = 100 * 5_000;

/** Tool types a client runs itself (its results come back as ordinary, bounded input). */
const CLIENT_TOOLS: Readonly<Record<string, (type: string) => boolean>> = {
  anthropic: (type) => type === "custom" || /^(bash|text_editor|computer|memory)_\d+$/.test(type),
  openai: (type) =>
    ["function", "custom", "local_shell", "shell", "apply_patch", "computer_use_preview"].includes(
      type,
    ),
};

/** Top-level fields that pull in input the body does not hold. */
const UNBOUNDED_FIELDS: Readonly<Record<string, readonly string[]>> = {
  anthropic: ["mcp_servers", "container"],
  openai: ["previous_response_id", "conversation", "prompt"],
};

/** Keys whose presence anywhere names a stored file or a remote fetch. */
const REMOTE_KEYS = new Set(["file_id", "file_url"]);

/** Walks `body` (iteratively: a deep body cannot overflow the stack) for what bills unseen. */
export function requestBounds(provider: string, body: Record<string, unknown>): RequestBounds {
  for (const field of UNBOUNDED_FIELDS[provider] ?? []) {
    if (body[field] !== undefined && body[field] !== null) {
      return { unbounded: `"${field}" (input the proxy cannot see)`, extraInputTokens: 0 };
    }
  }
  const serverTool = serverToolOf(provider, body.tools);
  if (serverTool !== undefined) {
    return { unbounded: `the server tool "${serverTool}"`, extraInputTokens: 0 };
  }
  let extraInputTokens = 0;
  const stack: unknown[] = [body.messages, body.input, body.system, body.instructions];
  while (stack.length > 0) {
    const value = stack.pop();
    if (typeof value !== "object" || value === null) continue;
    if (Array.isArray(value)) {
      stack.push(...(value as unknown[]));
      continue;
    }
    const record = value as Record<string, unknown>;
    const found = boundOf(record);
    if (typeof found === "string") return { unbounded: found, extraInputTokens: 0 };
    extraInputTokens += found;
    stack.push(...Object.values(record));
  }
  return { extraInputTokens };
}

/** The type of the first tool the provider runs itself, in `tools` or a namespace of them. */
function serverToolOf(provider: string, tools: unknown): string | undefined {
  const isClient = CLIENT_TOOLS[provider] ?? (() => false);
  const pending = Array.isArray(tools) ? [...(tools as unknown[])] : [];
  for (let seen = 0; pending.length > 0 && seen < 10_000; seen++) {
    const tool = pending.pop() as { type?: unknown; tools?: unknown } | null;
    const type = tool?.type;
    if (type === undefined) continue;
    // Codex groups its function tools in namespaces: what counts is what they hold.
    if (type === "namespace" && Array.isArray(tool?.tools)) {
      pending.push(...(tool.tools as unknown[]));
    } else if (typeof type !== "string") return JSON.stringify(type);
    else if (!isClient(type)) return type;
  }
  return undefined;
}

/** One object's unbounded input (as a reason), or the tokens it adds beyond its bytes. */
function boundOf(record: Record<string, unknown>): string | number {
  for (const key of Object.keys(record)) {
    if (REMOTE_KEYS.has(key)) return `an input by "${key}"`;
  }
  const source = record.source as Record<string, unknown> | undefined;
  if (typeof source === "object" && source !== null && typeof source.type === "string") {
    if (source.type === "url" || source.type === "file")
      return `a ${String(record.type)} by ${source.type}`;
    if (source.media_type === "application/pdf") return PDF_TOKENS_MAX;
    if (record.type === "image") return IMAGE_TOKENS_MAX;
  }
  if (record.type === "input_audio" || record.input_audio !== undefined) return "audio input";
  if (record.image_url !== undefined) {
    const url: unknown = record.image_url;
    const text =
      typeof url === "object" && url !== null ? (url as Record<string, unknown>).url : url;
    // A data: URL carries the image inline; anything else is fetched by the provider.
    if (typeof text !== "string" || !text.startsWith("data:")) return "an image by URL";
    return IMAGE_TOKENS_MAX;
  }
  if (typeof record.file_data === "string") return PDF_TOKENS_MAX;
  return 0;
}
