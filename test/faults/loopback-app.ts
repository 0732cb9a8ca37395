import type { ChildProcess } from "node:child_process";
import { createHmac } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { appEnv, startApp, stopApp, WEBHOOK_SECRET } from "../../bench/app-process.js";
import { openStore, type OpenedStore } from "../../src/store/embedded.js";
import { FakeGitHub } from "../github/helpers/fake-github.js";
import { GitHttpServer } from "../github/helpers/git-http-server.js";
import { seedRepository } from "../github/helpers/harness.js";
import { OWNER, REPO } from "../helpers/payloads.js";
import type { Delivery } from "./app-runs.js";
import { recordPushes } from "./pushes.js";
import { freePort } from "../helpers/free-port.js";
import { decodeSettings } from "../../src/settings/index.js";

/** The fake's installation token: the only credentials its git side takes. */
const TOKEN = "ghs_faketoken";

/** Serves the fake's REST API over HTTP, as a GitHub Enterprise Server's `/api/v3`. */
function serveApi(github: () => FakeGitHub) {
  return (request: IncomingMessage, response: ServerResponse) => {
    let body = "";
    request.setEncoding("utf8");
    request.on("data", (chunk: string) => (body += chunk));
    request.on("end", () => {
      const [status, data, headers = {}] = github().answer(
        request.method ?? "GET",
        request.url ?? "/",
        body,
        request.headers.authorization,
      );
      response.writeHead(status, { "content-type": "application/json", ...headers });
      response.end(JSON.stringify(data));
    });
  };
}

/**
 * The GitHub App as a process (`node dist/github/main.js`, as the benchmarks start it) on a
 * state directory of its own (the embedded store), talking over HTTP to a loopback GitHub
 * Enterprise Server: the {@link FakeGitHub} API at `/api/v3` (so every request is recorded and
 * checked as in the in-process tests) and git's smart HTTP over a bare repository whose pushes
 * are logged (see `recordPushes`).
 */
export class LoopbackApp {
  /** The app process now; replaced by {@link restart}. */
  child: ChildProcess | undefined;
  restarts = 0;

  private constructor(
    readonly dir: string,
    readonly remote: string,
    readonly github: FakeGitHub,
    private readonly git: GitHttpServer,
    /** The app's environment (its state directory, port, loopback GitHub). */
    readonly env: Record<string, string | undefined>,
  ) {}

  /** A repository with `workflow` on its default branch, served by a fresh loopback GitHub. */
  static async create(workflow: string): Promise<LoopbackApp> {
    const dir = mkdtempSync(join(tmpdir(), "cc-appkill-"));
    const remote = seedRepository(dir, workflow);
    recordPushes(remote);
    const box: { github?: FakeGitHub } = {};
    const server = new GitHttpServer(
      TOKEN,
      serveApi(() => box.github!),
    );
    const host = await server.listen();
    const github = (box.github = new FakeGitHub(`http://${host}/api/v3`));
    github.setFile("main", ".clustercode/workflow.yml", workflow);
    github.remote = remote;
    server.repositories.set(`${OWNER}/${REPO}`, remote);
    const env = appEnv(join(dir, "state"), host, {
      PORT: String(await freePort()),
      // Restarts are seconds apart: a dead process's deliveries are taken over within seconds.
      CLUSTERCODE_DELIVERY_SWEEP_MS: "500",
      CLUSTERCODE_GITHUB_WRITE_GAP_MS: "0",
      CLUSTERCODE_GITHUB_NOTIFICATION_GAP_MS: "0",
      CLUSTERCODE_DEVBOX_LAPSE_MS: "30000",
      // A killed replica's DevBoxes are declared lost once their leases lapse: seconds here.
      CLUSTERCODE_DEVBOX_LEASE_MS: "2000",
    });
    mkdirSync(join(dir, "state"));
    return new LoopbackApp(dir, remote, github, server, env);
  }

  /** Starts the app, SIGKILLing itself at effect boundary `faultAt` when given. */
  async start(faultAt?: number): Promise<void> {
    const extra = faultAt === undefined ? {} : { CLUSTERCODE_FAULT_AT: String(faultAt) };
    this.child = (await startApp({ ...this.env, ...extra })).child;
  }

  /** Whether the app process died (the fault injection's SIGKILL). */
  get dead(): boolean {
    const child = this.child;
    return child === undefined || child.exitCode !== null || child.signalCode !== null;
  }

  /** Starts the app again, without fault injection, when it died; true if it did. */
  async reviveIfDead(): Promise<boolean> {
    if (!this.dead) return false;
    this.restarts++;
    await this.start();
    return true;
  }

  /**
   * Sends a delivery as GitHub does, signed, once; true when the app acknowledged it (2xx). A
   * delivery the app did not acknowledge is for GitHub to send again.
   */
  send(delivery: Delivery): Promise<boolean> {
    return sendSigned(Number(this.env.PORT), delivery);
  }

  /**
   * Stops the app (SIGTERM: it finishes recovering and what it has in hand) and opens its
   * store. An app the fault injection killed meanwhile (it may be dying unseen) is started again
   * first, so that what it left is recovered.
   */
  async stopAndOpenStore(): Promise<OpenedStore> {
    for (;;) {
      const child = this.child;
      if (child === undefined) break;
      await stopApp(child);
      if (child.signalCode !== "SIGKILL") break;
      this.restarts++;
      await this.start();
    }
    return openStore({
      stateDir: this.env.CLUSTERCODE_STATE_DIR!,
      settings: decodeSettings({}).store,
    });
  }

  /** Kills what is left and removes the directory. */
  async close(): Promise<void> {
    if (this.child !== undefined && !this.dead) this.child.kill("SIGKILL");
    await this.git.close();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/**
 * Sends a delivery to the app on `port` as GitHub does, signed, once; true when the app
 * acknowledged it (2xx).
 */
export async function sendSigned(port: number, { id, event, payload }: Delivery): Promise<boolean> {
  const body = JSON.stringify(payload);
  const signature = createHmac("sha256", WEBHOOK_SECRET).update(body).digest("hex");
  const response = await fetch(`http://127.0.0.1:${port}/api/github/webhooks`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-github-event": event,
      "x-github-delivery": id,
      "x-hub-signature-256": `sha256=${signature}`,
    },
    body,
    signal: AbortSignal.timeout(10_000),
  }).catch(() => undefined);
  return response?.ok === true;
}
