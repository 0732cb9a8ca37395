#!/usr/bin/env node
/**
 * The `clustercode` command. Each subcommand is imported only when it runs, so `validate` and
 * `graph` start without loading Probot or the AWS SDK.
 */
import { UsageError, type Command } from "./command.js";

const COMMANDS: Record<string, () => Promise<{ default: Command }>> = {
  validate: () => import("./validate-command.js"),
  graph: () => import("./graph-command.js"),
  devbox: () => import("./devbox-command.js"),
  run: () => import("./run-command.js"),
  resume: async () => ({ default: (await import("./control-commands.js")).resume }),
  approve: async () => ({ default: (await import("./control-commands.js")).approve }),
  reject: async () => ({ default: (await import("./control-commands.js")).reject }),
  retry: async () => ({ default: (await import("./control-commands.js")).retry }),
  cancel: async () => ({ default: (await import("./control-commands.js")).cancel }),
  resolve: async () => ({ default: (await import("./control-commands.js")).resolveRun }),
  status: async () => ({ default: (await import("./status-command.js")).status }),
  log: async () => ({ default: (await import("./status-command.js")).log }),
  ui: () => import("./ui-command.js"),
};

const HELP = `Usage: clustercode <command> [options]

Commands:
  validate [FILE...]   check workflows (default: .clustercode/workflow.yml and
                       .clustercode/workflows/*.yml); --format human|json|github
  graph FILE           print a workflow as a Mermaid flowchart
  run FILE             run a workflow locally [--repo DIR] [--brief TEXT|--brief-file F]
  status [RUN]         where a run (or every run of --repo) stands
  log RUN              the run's evidence log
  ui                   serve the run pages on 127.0.0.1 [--port N] [--repo DIR]
  approve RUN          answer its approval [--node N] [--as NAME] [--note TEXT]
  reject RUN           reject its approval [--node N] [--as NAME] [--note REASON]
  resume RUN           continue a run whose process stopped; fires due timers
  retry RUN            re-enter a failed run (or a lost node) with a new attempt
  cancel RUN           stop the run and its DevBoxes
  resolve RUN succeeded|failed   answer a lost, non-idempotent node
  devbox               the DevBox agent (started by executors)

Run commands take --state-dir D (else CLUSTERCODE_STATE_DIR, else
$XDG_STATE_HOME/clustercode) and --format human|json.

Exit codes: 0 ok or run succeeded; 1 findings, or run failed, cancelled or\nescalated; 2 usage or I/O error; 3 run awaiting input.
`;

// The AWS SDK warns on every start that it will want Node 22 from 2027; our engines field says so.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= "true";
// A reader that went away (`clustercode log RUN | head`) is not an error.
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code === "EPIPE") process.exit(0);
  throw error;
});

async function main(argv: string[]): Promise<number> {
  const [name, ...args] = argv;
  if (name === undefined || name === "help" || name === "--help" || name === "-h") {
    process.stdout.write(HELP);
    return name === undefined ? 2 : 0;
  }
  const load = COMMANDS[name];
  if (load === undefined) {
    process.stderr.write(`clustercode: unknown command "${name}"\n\n${HELP}`);
    return 2;
  }
  const command = (await load()).default;
  try {
    return await command(args, {
      stdout: process.stdout,
      stderr: process.stderr,
      cwd: process.cwd(),
      env: process.env,
    });
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`clustercode ${name}: ${error.message}\n`);
      return 2;
    }
    throw error;
  }
}

const code = await main(process.argv.slice(2));
// Exit once output is flushed: a DevBox or socket still open must not keep a finished command alive.
await new Promise<void>((resolve) => process.stdout.write("", () => resolve()));
await new Promise<void>((resolve) => process.stderr.write("", () => resolve()));
process.exit(code);
