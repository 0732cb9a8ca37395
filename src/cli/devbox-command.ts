import { readAgentSettings } from "../devbox/agent/settings.js";
import { runDevBoxAgent } from "../devbox/agent/agent.js";
import { parseOptions, UsageError, type Command } from "./command.js";
import { runWarmDevBox } from "./warm-devbox.js";

const USAGE =
  "usage: clustercode devbox --api URL (--devbox ID [--token-stdin] | --warm ID --token-stdin) (without --token-stdin, a DevBox's token is in CLUSTERCODE_DEVBOX_TOKEN)";

/**
 * `clustercode devbox --api URL --devbox ID`: the DevBox agent, run by an executor inside a fresh
 * clone. The token and the run's settings come from the environment, never from argv (argv is
 * visible to every user of the host). Exit codes: see `AGENT_EXIT`.
 */
const devbox: Command = async (args, io) => {
  const { values, positionals } = parseOptions(args, {
    api: { type: "string" },
    devbox: { type: "string" },
    warm: { type: "string" },
    "token-stdin": { type: "boolean" },
  });
  const { api, devbox, warm } = values;
  // A warm task has no DevBox yet: its identity is the warm one, its token read from stdin.
  const oneIdentity = (devbox === undefined) !== (warm === undefined);
  if (api === undefined || !oneIdentity || positionals.length > 0) throw new UsageError(USAGE);
  if (warm !== undefined && values["token-stdin"] !== true) throw new UsageError(USAGE);
  if (!URL.canParse(api)) throw new UsageError(`--api must be a URL, got "${api}"`);
  const apiUrl = api.replace(/\/+$/, "");
  const token = values["token-stdin"] === true ? await readToken(process.stdin) : undefined;
  const terminate = new AbortController();
  const onSignal = () => terminate.abort();
  process.once("SIGTERM", onSignal);
  process.once("SIGINT", onSignal);
  try {
    if (warm !== undefined) {
      if (token === undefined || token === "") throw new UsageError("the warm token is empty");
      return await runWarmDevBox(io, { apiUrl, warmId: warm, token, signal: terminate.signal });
    }
    const settings = readAgentSettings(io.settings, token);
    if (!settings.ok) throw new UsageError(settings.message);
    return await runDevBoxAgent({
      apiUrl,
      devboxId: devbox as string,
      cwd: io.cwd,
      env: io.env,
      settings: settings.settings,
      signal: terminate.signal,
      log: io.stderr,
    });
  } finally {
    process.off("SIGTERM", onSignal);
    process.off("SIGINT", onSignal);
  }
};
export default devbox;

/** The first line of `stream` (the local executor writes the token and closes it). */
async function readToken(stream: NodeJS.ReadableStream): Promise<string> {
  let text = "";
  for await (const chunk of stream) {
    text += String(chunk);
    if (text.includes("\n") || text.length > 4096) break;
  }
  return text.split("\n")[0]?.trim() ?? "";
}
