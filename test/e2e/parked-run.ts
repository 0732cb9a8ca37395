import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cliEnv, makeRepo, runCli, summaryOf } from "./local-cli.js";

const lifecycle = readFileSync(
  new URL("../../workflows-schema/examples/lifecycle.yml", import.meta.url),
  "utf8",
);

/** An agent stand-in: the loop's turns count themselves, so the loop's first gate run fails. */
const FAKE_AGENT = `import { appendFileSync, readFileSync, writeFileSync } from "node:fs";
const prompt = readFileSync(process.argv[2], "utf8");
if (prompt.includes("Implement DESIGN.md")) appendFileSync("LOOP_TURNS", "x");
writeFileSync("DESIGN.md", "a design\\n");
console.log(JSON.stringify({ result: "done", cost_usd: 0.25, usage: { input_tokens: 1200, output_tokens: 340 } }));
`;
/** The tests gate: prints markup (to prove it is shown as text) and passes from the second turn. */
const TESTS = `const fs = require("fs");
const turns = fs.existsSync("LOOP_TURNS") ? fs.readFileSync("LOOP_TURNS", "utf8").length : 2;
console.log("<script>window.pwned = 1</script> turns: " + turns);
process.exit(turns >= 2 ? 0 : 1);
`;
/** A judge stand-in: picks the last allowed label (approved when offered), with reasoning. */
const FAKE_JUDGE = `let input = "";
process.stdin.on("data", (chunk) => (input += chunk));
process.stdin.on("end", () => {
  const request = JSON.parse(input);
  const label = request.labels.includes("approved") ? "approved" : request.labels.at(-1);
  console.log(JSON.stringify({ label, reasoning: "Both designs work; this one is <b>smaller</b>." }));
});
`;

/** A local run of the lifecycle example parked at its deploy approval. */
export interface ParkedRun {
  runId: string;
  repo: string;
  state: string;
  root: string;
  env: NodeJS.ProcessEnv;
}

/**
 * Runs the lifecycle example with command engines to its approval (exit 3): a run node, a
 * judged prototype of two variants, a loop whose first iteration fails its tests gate, then
 * decisions, and the approval. `workflow`: the lifecycle's text (default: the example's).
 */
export async function parkRunAtApproval(workflow = lifecycle): Promise<ParkedRun> {
  const { repo, state, root } = makeRepo({
    "package.json": JSON.stringify({
      name: "demo",
      version: "1.0.0",
      scripts: { test: "node tests.cjs", lint: "node -e 0" },
    }),
    "package-lock.json": JSON.stringify({
      name: "demo",
      version: "1.0.0",
      lockfileVersion: 3,
      requires: true,
      packages: { "": { name: "demo", version: "1.0.0" } },
    }),
    "fake-agent.mjs": FAKE_AGENT,
    "tests.cjs": TESTS,
  });
  mkdirSync(join(repo, "scripts"));
  writeFileSync(
    join(repo, "scripts/deploy.sh"),
    "#!/usr/bin/env bash\necho deployed > DEPLOYED\n",
    {
      mode: 0o755,
    },
  );
  writeFileSync(join(repo, "scripts/check-incidents.sh"), "#!/usr/bin/env bash\ntrue\n", {
    mode: 0o755,
  });
  execFileSync("git", ["add", "-A"], { cwd: repo });
  execFileSync("git", ["commit", "-qm", "scripts"], { cwd: repo });
  writeFileSync(join(root, "judge.mjs"), FAKE_JUDGE);
  const engine = `[node, fake-agent.mjs, "{prompt_file}"]`;
  writeFileSync(
    join(root, "lifecycle.yml"),
    `${workflow}engines:\n  claude: { command: ${engine}, cost: { json_path: cost_usd } }\n  codex: { command: ${engine}, cost: { json_path: cost_usd } }\n`,
  );
  const env = cliEnv({
    CLUSTERCODE_JUDGE_COMMAND: JSON.stringify(["node", join(root, "judge.mjs")]),
  });
  const result = await runCli(
    [
      "run",
      join(root, "lifecycle.yml"),
      "--repo",
      repo,
      "--brief",
      "Add a greeting <img src=x onerror=alert(1)>",
      "--state-dir",
      state,
      "--format",
      "json",
    ],
    { cwd: repo, env: { ...env, NPM_TOKEN: "npm-token-for-the-test" }, timeoutMs: 120_000 },
  );
  if (result.code !== 3) throw new Error(`run exited ${result.code}: ${result.stderr}`);
  return { runId: summaryOf(result).run, repo, state, root, env };
}
