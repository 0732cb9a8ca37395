import { OutputTail } from "../output-tail.js";
import { runProcess } from "../process-runner.js";
import type { CommandSandbox } from "./command-sandbox.js";
import type { SecretMask } from "./secret-mask.js";

/** Longest a CLI may take to answer `--version`. */
const PROBE_MS = 20_000;

/** Where the probes run: the checkout, with the commands' environment and mask. */
interface ProbeContext {
  cwd: string;
  env: Record<string, string>;
  signal: AbortSignal;
  mask: SecretMask;
  /** Wraps each probe (the CLI may be the checkout's own, so it is sandboxed too). */
  sandbox?: CommandSandbox;
}

/**
 * Asks each agent CLI for its `--version` (run without a shell) and returns the first line of each
 * answer, masked, by argv[0]: the harness version that evidence and traces carry. A CLI that is
 * missing or fails says so instead of a version; the DevBox works on either way.
 */
export async function probeHarnesses(
  binaries: readonly string[],
  context: ProbeContext,
): Promise<Record<string, string>> {
  const versions: Record<string, string> = {};
  for (const binary of binaries) versions[binary] = await probe(binary, context);
  return versions;
}

async function probe(binary: string, context: ProbeContext): Promise<string> {
  const output = new OutputTail(4096);
  const timeout = AbortSignal.timeout(PROBE_MS);
  const { exitCode } = await runProcess({
    file: binary,
    args: ["--version"],
    cwd: context.cwd,
    env: context.env,
    signal: AbortSignal.any([context.signal, timeout]),
    output,
    mask: context.mask,
    ...(context.sandbox === undefined ? {} : { wrap: context.sandbox }),
  });
  const first = output.text().trim().split("\n")[0]?.trim().slice(0, 200) ?? "";
  if (exitCode === 0 && first !== "") return first;
  return timeout.aborted
    ? "unknown (--version timed out)"
    : `unknown (--version exited ${exitCode})`;
}
