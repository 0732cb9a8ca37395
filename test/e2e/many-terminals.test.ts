import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  cliEnv,
  devboxCheckouts,
  makeRepo,
  runCli,
  startCli,
  watch,
  writeDevBoxFile,
} from "./local-cli.js";

/**
 * A command that prints a line and waits for the test to open its gate (a file in its
 * checkout's .git, which both the sandboxed DevBox and the test see), then an approval.
 */
const workflow = `version: 1
name: terminals
on: { label: x }
nodes:
  work:
    kind: run
    run: 'echo before-the-gate; while [ ! -f .git/gate ]; do sleep 0.1; done; echo after-the-gate'
  ship:
    kind: approval
    message: Ship it?
edges:
  - { from: work, to: ship }
  - { from: ship, to: done, label: approved }
  - { from: ship, to: failed, label: rejected }
`;

/** Asks the run pages for JSON (bounded: retried until `test` holds). */
async function pollJson<T>(url: string, test: (value: T) => boolean): Promise<T> {
  let last: T | undefined;
  for (let i = 0; i < 600; i++) {
    last = (await (await fetch(url)).json()) as T;
    if (test(last)) return last;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} never answered as expected: ${JSON.stringify(last)}`);
}

function setUp() {
  const { repo, state, root } = makeRepo();
  writeFileSync(join(root, "wf.yml"), workflow);
  const env = cliEnv({ USER: "carol" });
  /** Opens the gate once `devboxes` DevBoxes have their checkouts. */
  const openGate = async (devboxes: number) => {
    for (let i = 0; i < 300 && devboxCheckouts(state).length < devboxes; i++)
      await new Promise((r) => setTimeout(r, 100));
    writeDevBoxFile(state, "gate");
  };
  const start = (args: string[]) =>
    watch(startCli([...args, "--state-dir", state], { cwd: repo, env }));
  const cli = (args: string[]) => runCli([...args, "--state-dir", state], { cwd: repo, env });
  const run = start(["run", join(root, "wf.yml"), "--repo", repo]);
  const runId = async () => {
    await run.until((out) => /run (r\w+) of terminals/.test(out.stdout), "the run's id");
    return /run (r\w+) of terminals/.exec(run.seen.stdout)?.[1] ?? "";
  };
  return { repo, root, openGate, start, cli, run, runId };
}

type RunJson = { status: string; visits: { node: string }[] };

describe("one state directory, many terminals", () => {
  it("serves a CLI run live in ui, which answers its approval, while status and a second run work", async () => {
    const { root, openGate, start, cli, run, runId } = setUp();
    const id = await runId();
    const ui = start(["ui", "--port", "0"]);
    try {
      await ui.until((out) => /http:\/\/127\.0\.0\.1:\d+\/runs\n/.test(out.stdout), "the URL");
      const base = /(http:\/\/127\.0\.0\.1:\d+)\/runs/.exec(ui.seen.stdout)?.[1] ?? "";
      // The run page shows the CLI run live: running while its command waits on the gate.
      await pollJson<RunJson>(`${base}/api/runs/${id}`, (view) => view.status === "running");
      const status = await cli(["status", id]);
      expect(status.code).toBe(0);
      expect(status.stdout).toMatch(new RegExp(`^${id} +terminals +running`));

      const second = start(["run", join(root, "wf.yml"), "--quiet"]);
      await second.until((out) => /run (r\w+) of terminals/.test(out.stdout), "a second run");
      await openGate(2);
      expect(await run.exited).toBe(3);
      expect(await second.exited).toBe(3);
      expect(run.seen.stdout).toContain("waiting for approval of ship");

      // Approve on the run page, served by ui: the run goes on in the ui process and succeeds.
      const page = await (await fetch(`${base}/runs/${id}`)).text();
      const csrf = /data-csrf="([0-9a-f]+)"/.exec(page)?.[1] ?? "";
      const view = await pollJson<RunJson>(`${base}/api/runs/${id}`, (v) => v.visits.length === 2);
      const answer = await fetch(`${base}/api/runs/${id}/answer`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-clustercode-csrf": csrf },
        // The page names the approval by its visit index.
        body: JSON.stringify({ decision: "approved", visit: view.visits.length - 1 }),
      });
      expect(answer.status).toBe(200);
      await pollJson<RunJson>(`${base}/api/runs/${id}`, (v) => v.status === "succeeded");
      expect((await cli(["status", id])).stdout).toMatch(
        new RegExp(`^${id} +terminals +succeeded`),
      );
    } finally {
      ui.child.kill("SIGINT");
    }
    expect(await ui.exited).toBe(0);
  }, 180_000);

  it("cancels a run from another terminal, and the run's own terminal says so", async () => {
    const { cli, run, runId } = setUp();
    const id = await runId();
    await run.until((out) => out.stdout.includes("[work] before-the-gate"), "live output");
    const cancel = await cli(["cancel", id]);
    expect(cancel.stderr).toBe("");
    expect(cancel.code).toBe(0);
    expect(await run.exited).toBe(1);
    expect(run.seen.stdout).toContain(`run ${id}: cancelled`);
    expect(run.seen.stdout).not.toContain("after-the-gate");
  }, 120_000);
});
