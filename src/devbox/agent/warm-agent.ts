import { OutputTail } from "../output-tail.js";
import { killGroup, runProcess } from "../process-runner.js";
import { writeWarmMarker } from "../warm-marker.js";
import {
  claimPollSchema,
  warmRoute,
  type WarmClaim,
  type WarmReadyBody,
} from "../warm-protocol.js";
import type { CommandSandbox } from "./command-sandbox.js";
import { AGENT_EXIT } from "./exit-codes.js";

/** What a warm task's agent needs before its claim. */
export interface WarmAgentOptions {
  apiUrl: string;
  warmId: string;
  /** The single-use warm token (read from stdin by the CLI). */
  token: string;
  /** The checkout of the default branch the entrypoint cloned. */
  cwd: string;
  /** The task's environment: no token, no secret. */
  env: Record<string, string>;
  setup: readonly string[];
  sandbox?: CommandSandbox;
  /** Gives up once the hub has not answered for this long (it is gone). */
  lapseMs: number;
  signal: AbortSignal;
  log: { write(text: string): unknown };
  /** How long each claim long-poll may be held; default 20 seconds. */
  pollWaitSeconds?: number;
}

/** How a warm agent's wait ended: claimed, or an exit code (see `AGENT_EXIT`). */
export type WarmOutcome = { claim: WarmClaim } | { exitCode: number };

/**
 * A warm task's agent before its claim: runs the setup in the default branch's checkout (no
 * token, no secret, no network but the hub), records it as done (the warm marker, so that the
 * claimed agent skips it at the same commit), reports ready, then long-polls for its claim.
 */
export async function runWarmAgent(options: WarmAgentOptions): Promise<WarmOutcome> {
  const say = (line: string) => options.log.write(`clustercode warm: ${line}\n`);
  const sha = (await git(options, ["rev-parse", "HEAD"])).trim();
  const gitDir = (await git(options, ["rev-parse", "--absolute-git-dir"])).trim();
  const setUp = await runSetup(options);
  if (options.signal.aborted) return { exitCode: AGENT_EXIT.terminated };
  if (setUp) await writeWarmMarker(gitDir, { sha, setup: [...options.setup] });
  else say("setup failed while warm; the claim runs it again");
  const ready: WarmReadyBody = { sha, setUp };
  let lastContact = Date.now();
  for (let reported = false; !options.signal.aborted;) {
    const answer = await call(options, reported ? "claim" : "ready", reported ? undefined : ready);
    if (answer.kind === "rejected") {
      say(`the hub refused the warm identity (${answer.status}); exiting`);
      return { exitCode: AGENT_EXIT.apiRejected };
    }
    if (answer.kind === "unreachable") {
      if (Date.now() - lastContact > options.lapseMs) return { exitCode: AGENT_EXIT.apiLost };
      await new Promise((resolve) => setTimeout(resolve, 500));
      continue;
    }
    lastContact = Date.now();
    if (!reported) {
      reported = true;
      say(`ready at ${sha}${setUp ? ", set up" : ""}; waiting for a claim`);
      continue;
    }
    const parsed = claimPollSchema.safeParse(answer.value);
    if (!parsed.success) return { exitCode: AGENT_EXIT.apiRejected };
    if ("claim" in parsed.data) return { claim: parsed.data.claim };
  }
  return { exitCode: AGENT_EXIT.terminated };
}

/** Runs the setup commands one at a time; true when they all passed. */
async function runSetup(options: WarmAgentOptions): Promise<boolean> {
  for (const script of options.setup) {
    let pgid: number | undefined;
    const { exitCode } = await runProcess({
      file: "bash",
      args: ["-eo", "pipefail", "-c", script],
      cwd: options.cwd,
      env: options.env,
      signal: options.signal,
      output: new OutputTail(4096),
      tee: (text) => options.log.write(text),
      onSpawn: (pid) => (pgid = pid),
      ...(options.sandbox === undefined ? {} : { wrap: options.sandbox }),
    });
    // Nothing the setup started outlives it: a warm task waits with no process of the run's.
    if (pgid !== undefined) killGroup(pgid, "SIGKILL");
    if (exitCode !== 0) return false;
  }
  return true;
}

type Answer =
  { kind: "ok"; value: unknown } | { kind: "rejected"; status: number } | { kind: "unreachable" };

/** One request to the warm routes. */
async function call(
  options: WarmAgentOptions,
  route: "ready" | "claim",
  body: unknown,
): Promise<Answer> {
  const wait = options.pollWaitSeconds ?? 20;
  const query = route === "claim" ? `?wait=${wait}` : "";
  try {
    const response = await fetch(`${options.apiUrl}${warmRoute(options.warmId, route)}${query}`, {
      method: route === "ready" ? "POST" : "GET",
      headers: {
        authorization: `Bearer ${options.token}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.any([options.signal, AbortSignal.timeout(wait * 1000 + 10_000)]),
    });
    const text = await response.text();
    if (response.status >= 500) return { kind: "unreachable" };
    if (!response.ok) return { kind: "rejected", status: response.status };
    return { kind: "ok", value: JSON.parse(text) as unknown };
  } catch {
    return { kind: "unreachable" };
  }
}

/**
 * Points the warm checkout's origin at the claimed DevBox's own git route (`url`), where its
 * agent fetches and pushes with its DevBox token from now on.
 */
export async function pointOriginAt(
  options: Pick<WarmAgentOptions, "cwd" | "env" | "signal">,
  url: string,
): Promise<void> {
  await git(options, ["remote", "set-url", "origin", url]);
}

/** Runs git in the checkout (never through a shell); its stdout. */
async function git(
  options: Pick<WarmAgentOptions, "cwd" | "env" | "signal">,
  args: string[],
): Promise<string> {
  const stdout = new OutputTail(64 * 1024);
  const { exitCode } = await runProcess({
    file: "git",
    args,
    cwd: options.cwd,
    env: { ...options.env, GIT_TERMINAL_PROMPT: "0" },
    signal: options.signal,
    output: new OutputTail(4096),
    stdout,
  });
  if (exitCode !== 0) throw new Error(`git ${args[0] ?? ""} exited with ${exitCode}`);
  return stdout.text();
}
