import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";

const REPLICA = new URL("./fixtures/replica.js", import.meta.url).pathname;

/**
 * An app replica process (`fixtures/replica.js`, over the built `dist/`), driven by JSON lines.
 */
export class Replica {
  readonly process: ChildProcess;
  readonly #pending = new Map<number, (answer: Record<string, unknown>) => void>();
  #next = 0;

  constructor(endpoint: string, table: string, name: string) {
    this.process = spawn(process.execPath, [REPLICA, endpoint, table, name], {
      stdio: ["pipe", "pipe", "inherit"],
      env: { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true" },
    });
    createInterface({ input: this.process.stdout! }).on("line", (line) => {
      const answer = JSON.parse(line) as { id: number };
      this.#pending.get(answer.id)?.(answer);
    });
  }

  ask(command: Record<string, unknown>): Promise<Record<string, unknown>> {
    const id = this.#next++;
    return new Promise((resolve) => {
      this.#pending.set(id, resolve);
      this.process.stdin!.write(`${JSON.stringify({ ...command, id })}\n`);
    });
  }

  /** SIGKILLs the process, as a host going away would, and waits until it is gone. */
  async kill(): Promise<void> {
    if (this.process.exitCode !== null || this.process.signalCode !== null) return;
    const closed = new Promise((resolve) => this.process.once("close", resolve));
    this.process.kill("SIGKILL");
    await closed;
  }

  async stop(): Promise<void> {
    this.process.stdin!.end();
    if (this.process.exitCode === null && this.process.signalCode === null) {
      await new Promise((resolve) => this.process.once("close", resolve));
    }
  }
}
