import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { DevBoxEvent } from "../../../src/devbox/hub/events.js";
import { DevBoxHub } from "../../../src/devbox/hub/hub.js";
import { LocalExecutor } from "../../../src/devbox/local/executor.js";
import { withoutCredentials } from "../../../src/devbox/local/repository-url.js";

const root = realpathSync(mkdtempSync(join(tmpdir(), "clustercode-credentials-")));
afterAll(() => rm(root, { recursive: true, force: true }));
const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", args, { cwd, encoding: "utf8" }).trim();

describe("repository credentials of local DevBoxes", () => {
  it("strips only the user and password of http(s) URLs", () => {
    expect(withoutCredentials("https://x-access-token:ghs_abc@github.com/acme/app.git")).toBe(
      "https://github.com/acme/app.git",
    );
    expect(withoutCredentials("/srv/repos/app")).toBe("/srv/repos/app");
    expect(withoutCredentials("https://github.com/acme/app.git")).toBe(
      "https://github.com/acme/app.git",
    );
  });

  it("keeps the token out of the checkout and asks the runtime for it to push", async () => {
    const source = join(root, "source");
    git(root, "init", "--quiet", "--initial-branch=main", source);
    writeFileSync(join(source, "README.md"), "# demo\n");
    git(source, "add", "README.md");
    git(source, "-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-qm", "init");
    // A HOME whose git configuration maps the GitHub-style URLs onto the local source repository.
    const home = join(root, "home");
    execFileSync("mkdir", ["-p", home]);
    writeFileSync(
      join(home, ".gitconfig"),
      `[url "${source}"]\n\tinsteadOf = https://x-access-token:ghs_SECRET@example.invalid/acme/app.git\n\tinsteadOf = https://example.invalid/acme/app.git\n[receive]\n\tdenyCurrentBranch = ignore\n`,
    );
    const events: DevBoxEvent[] = [];
    let tokens = 0;
    const hub = new DevBoxHub({
      onEvent: (event) => events.push(event),
      repoToken: () => {
        tokens++;
        return Promise.resolve({
          token: "ghs_SECRET",
          expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
        });
      },
    });
    const executor = new LocalExecutor({
      stateDir: join(root, "state"),
      // The DevBox fetches from an https host directly: only unsandboxed until git goes through
      // the hub (a sandboxed DevBox's only way out is the hub).
      env: { PATH: process.env.PATH, HOME: home, CLUSTERCODE_UNSAFE_LOCAL_DEVBOX: "1" },
    });
    const waitFor = async (predicate: (event: DevBoxEvent) => boolean) => {
      for (let i = 0; i < 500; i++) {
        const found = events.find(predicate);
        if (found !== undefined) return found;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      throw new Error(`no such event in ${JSON.stringify(events)}`);
    };
    try {
      const apiUrl = await hub.listen();
      const { token } = hub.register({ devboxId: "run9-box1", runId: "run9" });
      await executor.start({
        devboxId: "run9-box1",
        runId: "run9",
        apiUrl,
        token,
        repository: "https://x-access-token:ghs_SECRET@example.invalid/acme/app.git",
        spec: { branch: "clustercode/9-1", baseBranch: "main", setup: [], secrets: [] },
      });
      await waitFor((event) => event.type === "devbox.ready");
      const checkout = executor.paths("run9-box1").checkout;
      expect(readFileSync(join(checkout, ".git", "config"), "utf8")).not.toContain("ghs_SECRET");

      hub.dispatch("run9-box1", {
        commandId: "c1",
        command: { type: "script", script: "git remote -v; echo hi > hi.txt" },
      });
      const ran = await waitFor(
        (event) => event.type === "command.finished" && event.result.commandId === "c1",
      );
      expect(ran.type === "command.finished" ? ran.result.output : "").not.toContain("ghs_SECRET");

      hub.dispatch("run9-box1", {
        commandId: "c2",
        command: { type: "checkpoint", message: "save" },
      });
      const saved = await waitFor(
        (event) => event.type === "command.finished" && event.result.commandId === "c2",
      );
      expect(saved.type === "command.finished" ? saved.result.exitCode : -1).toBe(0);
      expect(git(source, "log", "--format=%s", "clustercode/9-1")).toContain("save");
      expect(tokens).toBeGreaterThanOrEqual(1);
    } finally {
      await executor.stopAll();
      await hub.close();
    }
  }, 30_000);
});
