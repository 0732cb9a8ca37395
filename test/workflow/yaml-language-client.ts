import { spawn, type ChildProcess } from "node:child_process";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const SERVER = require.resolve("yaml-language-server/bin/yaml-language-server");

/** An LSP diagnostic, as much of it as the tests read. */
export interface Diagnostic {
  message: string;
  severity?: number;
  range: { start: { line: number; character: number } };
}

/** An LSP completion item, as much of it as the tests read. */
export interface CompletionItem {
  label: string;
  insertText?: string;
}

type Message = {
  id?: number;
  method?: string;
  params?: unknown;
  result?: unknown;
  error?: { message: string };
};

/**
 * yaml-language-server over stdio, as an editor drives it: JSON-RPC with Content-Length framing,
 * documents opened by URI (so modelines resolve relative to them), diagnostics as the server
 * publishes them. Schema store lookups are off: nothing is fetched from the network.
 */
export class YamlLanguageClient {
  private readonly pending = new Map<number, (message: Message) => void>();
  private readonly diagnostics = new Map<string, Diagnostic[]>();
  private readonly waiting = new Map<string, ((found: Diagnostic[]) => void)[]>();
  private nextId = 1;
  private buffer = Buffer.alloc(0);

  private constructor(private readonly child: ChildProcess) {
    child.stdout?.on("data", (chunk: Buffer) => this.receive(chunk));
  }

  /** Starts the server and completes the LSP handshake. */
  static async start(): Promise<YamlLanguageClient> {
    const child = spawn(process.execPath, [SERVER, "--stdio"], { stdio: "pipe" });
    const client = new YamlLanguageClient(child);
    await client.request("initialize", {
      processId: process.pid,
      rootUri: null,
      capabilities: {
        textDocument: {
          completion: { completionItem: { snippetSupport: false } },
          publishDiagnostics: {},
        },
      },
    });
    client.notify("initialized", {});
    client.notify("workspace/didChangeConfiguration", {
      settings: {
        yaml: {
          validate: true,
          completion: true,
          hover: true,
          schemaStore: { enable: false },
          schemas: {},
        },
      },
    });
    return client;
  }

  /** Opens `text` as the document `uri` and resolves with the first diagnostics published for it. */
  async diagnose(uri: string, text: string): Promise<Diagnostic[]> {
    this.diagnostics.delete(uri);
    const published = new Promise<Diagnostic[]>((resolve) =>
      this.waiting.set(uri, [...(this.waiting.get(uri) ?? []), resolve]),
    );
    this.notify("textDocument/didOpen", {
      textDocument: { uri, languageId: "yaml", version: 1, text },
    });
    return published;
  }

  /** The completion items at `line`/`character` of an open document. */
  async complete(uri: string, line: number, character: number): Promise<CompletionItem[]> {
    const result = (await this.request("textDocument/completion", {
      textDocument: { uri },
      position: { line, character },
    })) as { items: CompletionItem[] } | CompletionItem[] | null;
    return Array.isArray(result) ? result : (result?.items ?? []);
  }

  /** Shuts the server down. */
  async stop(): Promise<void> {
    await this.request("shutdown", null);
    this.notify("exit", null);
    await new Promise((resolve) => {
      if (this.child.exitCode !== null) resolve(undefined);
      else this.child.once("exit", resolve);
    });
  }

  private request(method: string, params: unknown): Promise<unknown> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, (message) =>
        message.error === undefined
          ? resolve(message.result)
          : reject(new Error(message.error.message)),
      );
      this.send({ jsonrpc: "2.0", id, method, params });
    });
  }

  private notify(method: string, params: unknown): void {
    this.send({ jsonrpc: "2.0", method, params });
  }

  private send(message: object): void {
    const body = Buffer.from(JSON.stringify(message), "utf8");
    this.child.stdin?.write(`Content-Length: ${body.length}\r\n\r\n`);
    this.child.stdin?.write(body);
  }

  private receive(chunk: Buffer): void {
    this.buffer = Buffer.concat([this.buffer, chunk]);
    for (;;) {
      const end = this.buffer.indexOf("\r\n\r\n");
      if (end < 0) return;
      const length = Number(
        /Content-Length: (\d+)/i.exec(this.buffer.subarray(0, end).toString())?.[1],
      );
      if (this.buffer.length < end + 4 + length) return;
      const body = this.buffer.subarray(end + 4, end + 4 + length).toString("utf8");
      this.buffer = this.buffer.subarray(end + 4 + length);
      this.handle(JSON.parse(body) as Message);
    }
  }

  private handle(message: Message): void {
    if (message.method === undefined && message.id !== undefined) {
      this.pending.get(message.id)?.(message);
      this.pending.delete(message.id);
    } else if (message.method === "textDocument/publishDiagnostics") {
      const { uri, diagnostics } = message.params as { uri: string; diagnostics: Diagnostic[] };
      this.diagnostics.set(uri, diagnostics);
      for (const resolve of this.waiting.get(uri) ?? []) resolve(diagnostics);
      this.waiting.delete(uri);
    } else if (message.id !== undefined) {
      // A request from the server (configuration, capability registration): answer it plainly.
      const result =
        message.method === "workspace/configuration"
          ? (message.params as { items: unknown[] }).items.map(() => null)
          : null;
      this.send({ jsonrpc: "2.0", id: message.id, result });
    }
  }
}
