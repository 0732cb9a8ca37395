/**
 * An injected agent in a real local DevBox (the built agent, `dist/`) against a bare repository
 * on disk standing in for GitHub: git goes through the hub, which alone holds the repository's
 * credentials and pushes only what the run's policy allows.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { CommandRequest } from "../../src/engine/commands.js";
import type { DevBoxEvent } from "../../src/devbox/hub/events.js";
import { DevBoxHub } from "../../src/devbox/hub/hub.js";
import { LocalExecutor } from "../../src/devbox/local/executor.js";

const root = realpathSync(mkdtempSync(join(tmpdir(), "clustercode-git-push-")));
afterAll(() => rm(root, { recursive: true, force: true }));
// The DevBox's checkout belongs to its own uid when the tests run as root: trust it here.
const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", ["-c", "safe.directory=*", ...args], { cwd, encoding: "utf8" }).trim();

const RUN_BRANCH = "clustercode/9-run9";
const SECRET = "run9-secret-value-0123456789";
const INSTALLATION_TOKEN = `ghs_${"x".repeat(36)}`;

describe("git from a DevBox goes through the hub", () => {
  it("pushes only the run's branches, refuses and records leaks, and leaves no GitHub token in the DevBox", async () => {
    const seed = join(root, "seed");
    git(root, "init", "--quiet", "--initial-branch=main", seed);
    writeFileSync(join(seed, "README.md"), "# demo\n");
    git(seed, "add", "README.md");
    git(seed, "-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-qm", "init");
    const upstream = join(root, "github.git");
    git(root, "clone", "--quiet", "--bare", seed, upstream);
    const home = join(root, "home");
    mkdirSync(home);

    const events: DevBoxEvent[] = [];
    const hub = new DevBoxHub({
      onEvent: (event) => events.push(event),
      git: {
        stateDir: join(root, "hub"),
        // The installation token is the hub's alone (a local path ignores the header).
        upstreamOf: () =>
          Promise.resolve({
            url: upstream,
            env: {
              GIT_CONFIG_COUNT: "1",
              GIT_CONFIG_KEY_0: "http.extraHeader",
              GIT_CONFIG_VALUE_0: `Authorization: Bearer ${INSTALLATION_TOKEN}`,
            },
          }),
        policyOf: () => Promise.resolve({ runBranch: RUN_BRANCH, allowWorkflowChanges: false }),
      },
    });
    const executor = new LocalExecutor({
      stateDir: join(root, "state"),
      env: { PATH: process.env.PATH, HOME: home, RUN_SECRET: SECRET },
    });
    const finished = async (commandId: string) => {
      for (let i = 0; i < 1000; i++) {
        const found = events.find(
          (event) => event.type === "command.finished" && event.result.commandId === commandId,
        );
        if (found?.type === "command.finished") return found.result;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      throw new Error(`command ${commandId} never finished: ${JSON.stringify(events)}`);
    };
    const run = async (commandId: string, command: CommandRequest["command"]) => {
      hub.dispatch("run9-box1", { commandId, command });
      return finished(commandId);
    };
    const script = (commandId: string, text: string) =>
      run(commandId, { type: "script", script: text });
    const checkpoint = (commandId: string) =>
      run(commandId, { type: "checkpoint", message: `checkpoint ${commandId}` });
    const upstreamRef = (ref: string) => {
      try {
        return git(upstream, "rev-parse", "--verify", "--quiet", ref);
      } catch {
        return undefined;
      }
    };

    try {
      const apiUrl = await hub.listen();
      const { token } = hub.register({
        devboxId: "run9-box1",
        runId: "run9",
        secretValues: [SECRET],
      });
      await executor.start({
        devboxId: "run9-box1",
        runId: "run9",
        apiUrl,
        token,
        repository: hub.gitUrl("run9-box1", "acme/app"),
        spec: {
          branch: RUN_BRANCH,
          baseBranch: "main",
          setup: [],
          secrets: ["RUN_SECRET"],
        },
        env: { RUN_SECRET: SECRET },
      });
      const checkout = executor.paths("run9-box1").checkout;

      // The agent's own checkpoint of its run branch is accepted and visible upstream.
      const work = await script("w1", "echo work > work.txt");
      expect(work.exitCode).toBe(0);
      expect((await checkpoint("c1")).exitCode).toBe(0);
      const accepted = upstreamRef(`refs/heads/${RUN_BRANCH}`);
      expect(accepted).toBe(git(checkout, "rev-parse", "HEAD"));

      // The injected agent holds no credentials: nothing in its environment or its files.
      const look = await script("look", "env; cat .git/config; git remote -v");
      expect(look.output).not.toContain(INSTALLATION_TOKEN);
      expect(look.output).not.toContain(token);
      expect(look.output).not.toMatch(/gh[pousr]_[A-Za-z0-9]{30,}/);
      expect(readFileSync(join(checkout, ".git", "config"), "utf8")).not.toContain(token);

      // Pushing by itself gets it nowhere: to main, a tag, another run's branch.
      const direct = await script(
        "direct",
        [
          "git -c user.name=x -c user.email=x@example.com commit -q --allow-empty -m evil",
          "git push origin HEAD:refs/heads/main",
          "git tag v9 && git push origin refs/tags/v9",
          "git push origin HEAD:refs/heads/clustercode/1-other",
        ].join("; "),
      );
      expect(direct.exitCode).not.toBe(0);
      expect(upstreamRef("refs/tags/v9")).toBeUndefined();
      expect(upstreamRef("refs/heads/clustercode/1-other")).toBeUndefined();
      expect(upstreamRef("refs/heads/main")).toBe(git(seed, "rev-parse", "HEAD"));

      // A checkpoint carrying the run's secret value is refused and recorded (without the value).
      await script("leak", 'echo "token=$RUN_SECRET" > leak.txt');
      const leaked = await checkpoint("c2");
      expect(leaked.exitCode).not.toBe(0);
      expect(upstreamRef(`refs/heads/${RUN_BRANCH}`)).toBe(accepted);
      await script("undo1", "git reset -q --hard HEAD~1");

      // So is one carrying a credential shape, and one that changes the repository's workflows.
      await script("aws", `echo "${["AKIA", "IOSFODNN7EXAMPLE"].join("")}" > aws.txt`);
      expect((await checkpoint("c3")).exitCode).not.toBe(0);
      await script("undo2", "git reset -q --hard HEAD~1");
      await script("wf", "mkdir -p .github/workflows && echo 'on: push' > .github/workflows/x.yml");
      expect((await checkpoint("c4")).exitCode).not.toBe(0);
      expect(upstreamRef(`refs/heads/${RUN_BRANCH}`)).toBe(accepted);

      const refusals = events.filter((event) => event.type === "push.refused");
      expect(refusals.map((event) => event.reason)).toEqual([
        "it carries the value of one of the run's secrets",
        "it carries what looks like an AWS access key id",
        expect.stringContaining(".github/workflows/"),
      ]);
      expect(JSON.stringify(events)).not.toContain(SECRET);
    } finally {
      await executor.stopAll();
      await hub.close();
    }
  }, 60_000);
});
