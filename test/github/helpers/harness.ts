import { execFileSync } from "node:child_process";
import type { IncomingMessage, ServerResponse } from "node:http";
import { generateKeyPairSync, randomUUID } from "node:crypto";
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Probot, ProbotOctokit } from "probot";
import { clusterCodeApp } from "../../../src/github/intake/app.js";
import { AppHost } from "../../../src/github/setup/app-host.js";
import type { RunDocument } from "../../../src/runtime/runtime.js";
import { RunRepository } from "../../../src/store/run-repository.js";
import { InProcessExecutor } from "../../helpers/in-process-executor.js";
import { OWNER, REPO } from "../../helpers/payloads.js";
import { FakeGitHub } from "./fake-github.js";

const { privateKey } = generateKeyPairSync("rsa", {
  modulusLength: 2048,
  privateKeyEncoding: { type: "pkcs1", format: "pem" },
  publicKeyEncoding: { type: "spki", format: "pem" },
});

/** A build and an approval gate: the smallest workflow that parks a run for an answer. */
export const SHIP_WORKFLOW = `version: 1
name: ship
on:
  label: clustercode
nodes:
  build:
    kind: run
    run: echo built > out.txt
  gate:
    kind: approval
edges:
  - { from: build, to: gate }
  - { from: gate, to: done, label: approved }
  - { from: gate, to: failed, label: rejected }
`;

/** A running app over a fake GitHub and a local git repository standing in for the remote. */
export interface TestApp {
  probot: Probot;
  host: AppHost;
  github: FakeGitHub;
  remote: string;
  errors: string[];
  /** Sends a delivery through Probot (as its webhook middleware does after verifying it). */
  deliver(event: string, payload: object, id?: string): Promise<string>;
  /** Stops the app as a crash would leave things, opens a new one on the same state, recovers. */
  restart(): Promise<void>;
  /** Waits until a run of the store reaches `status`, then until the app is idle. */
  waitForStatus(status: string, timeoutMs?: number): Promise<RunDocument>;
  close(): Promise<void>;
}

/**
 * A bare repository `<dir>/remote.git` (its path returned) whose `main` holds `workflow` as
 * `.clustercode/workflow.yml` and a README, pushed from the clone `<dir>/work`.
 */
export function seedRepository(dir: string, workflow: string): string {
  const remote = join(dir, "remote.git");
  const work = join(dir, "work");
  mkdirSync(work);
  git(dir, "init", "--quiet", "--bare", "--initial-branch=main", remote);
  git(work, "init", "--quiet", "--initial-branch=main");
  mkdirSync(join(work, ".clustercode"));
  writeFileSync(join(work, ".clustercode", "workflow.yml"), workflow);
  writeFileSync(join(work, "README.md"), "hello\n");
  git(work, "add", "-A");
  git(work, "commit", "--quiet", "-m", "init");
  git(work, "push", "--quiet", remote, "main");
  return remote;
}

function git(cwd: string, ...args: string[]): void {
  execFileSync("git", args, {
    cwd,
    stdio: "ignore",
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: "t",
      GIT_AUTHOR_EMAIL: "t@e",
      GIT_COMMITTER_NAME: "t",
      GIT_COMMITTER_EMAIL: "t@e",
    },
  });
}

/** How a scenario's app differs from the default one. */
export interface TestAppOptions {
  /** The API base URL (a GHE server's `<protocol>://<host>/api/v3`); default api.github.com. */
  githubApi?: string;
  /** More environment for the app (e.g. GHE_HOST, GHE_PROTOCOL). */
  env?: Record<string, string>;
  /**
   * Whether DevBoxes clone the local bare repository directly (default), or the URL the app
   * builds for the GitHub it talks to (a scenario serving that repository over HTTP).
   */
  cloneDirectly?: boolean;
  /**
   * How DevBoxes run: their agents in this process (default, for tests of the app's GitHub
   * surface; see InProcessExecutor), or as the app runs them, sandboxed local processes of the
   * built CLI (`dist/`), for tests that do a DevBox's real work or exist to prove DevBoxes.
   */
  devboxes?: "in-process" | "processes";
  /** Receives the handlers the app adds to its HTTP server (the run pages). */
  addHandler?: (handler: (req: IncomingMessage, res: ServerResponse) => unknown) => void;
}

/** Starts the app with `workflow` as `.clustercode/workflow.yml` on the default branch. */
export async function startTestApp(
  workflow: string,
  options: TestAppOptions = {},
): Promise<TestApp> {
  const dir = mkdtempSync(join(tmpdir(), "cc-app-"));
  const remote = seedRepository(dir, workflow);

  const github = new FakeGitHub(options.githubApi);
  github.remote = remote;
  github.setFile("main", ".clustercode/workflow.yml", workflow);
  github.install();
  const errors: string[] = [];
  const open = async (): Promise<{ host: AppHost; probot: Probot }> => {
    const env = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      CLUSTERCODE_DEVBOX_LAPSE_MS: "30000",
      ...options.env,
    };
    const stateDir = join(dir, "state");
    const inProcess = () =>
      Promise.resolve({
        executor: new InProcessExecutor(stateDir, env),
        hubHost: "127.0.0.1",
        hubPort: 0,
        tokenFromHub: false,
      });
    const host = await AppHost.open(
      {
        stateDir,
        env,
        log: {
          error: (message, error) =>
            errors.push(`${message}: ${error instanceof Error ? error.message : String(error)}`),
        },
      },
      {
        ...(options.cloneDirectly === false ? {} : { cloneUrl: () => remote }),
        ...(options.devboxes === "processes" ? {} : { executor: inProcess }),
      },
    );
    const probot = new Probot({
      appId: 1,
      privateKey,
      logLevel: "fatal",
      ...(options.githubApi === undefined ? {} : { baseUrl: options.githubApi }),
      // A function, because Probot merges its own throttle options over plain defaults.
      Octokit: ProbotOctokit.defaults((options: { throttle?: object }) => ({
        ...options,
        retry: { enabled: false },
        throttle: { ...options.throttle, enabled: false },
      })),
    });
    // Without a server, Probot has nowhere to add HTTP handlers: a scenario that serves them
    // (the run pages) collects them with `addHandler`.
    await probot.load((probotApp, loadOptions) =>
      clusterCodeApp(host)(probotApp, {
        ...loadOptions,
        addHandler: (handler) => options.addHandler?.(handler),
      }),
    );
    return { host, probot };
  };
  const { host, probot } = await open();

  const app: TestApp = {
    probot,
    host,
    github,
    remote,
    errors,
    async deliver(event, payload, id = randomUUID()) {
      await app.probot.receive({ id, name: event, payload } as never);
      await app.host.idle();
      return id;
    },
    async restart() {
      await app.host.close();
      Object.assign(app, await open());
      await app.host.recover();
      await app.host.idle();
    },
    async waitForStatus(status, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const runs = await app.host.store.listRuns(`${OWNER}/${REPO}`, { limit: Infinity });
        const run = runs.find((candidate) => candidate.status === status);
        if (run !== undefined) {
          await app.host.idle();
          const loaded = await new RunRepository(app.host.store).get(run.runId);
          if (loaded === undefined) throw new Error(`run ${run.runId} vanished`);
          return loaded.document;
        }
        if (Date.now() > deadline) {
          throw new Error(
            `no run reached ${status}; runs: ${runs.map((r) => `${r.runId}=${r.status}`).join(", ")}; errors: ${errors.join("; ")}`,
          );
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    async close() {
      await app.host.close();
      github.uninstall();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return app;
}
