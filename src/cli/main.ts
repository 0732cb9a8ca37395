#!/usr/bin/env node
/**
 * The `clustercode` command. Each subcommand is imported only when it runs, so `validate` and
 * `graph` start without loading Probot or the AWS SDK.
 */
import { UsageError, type Command } from "./command.js";

const COMMANDS: Record<string, () => Promise<{ default: Command }>> = {
  validate: () => import("./validate-command.js"),
  graph: () => import("./graph-command.js"),
};

const HELP = `Usage: clustercode <command> [options]

Commands:
  validate [FILE...]   check workflows (default: .clustercode/workflow.yml and
                       .clustercode/workflows/*.yml); --format human|json|github
  graph FILE           print a workflow as a Mermaid flowchart

Exit codes: 0 ok, 1 findings or a failed run, 2 usage or I/O error.
`;

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

process.exitCode = await main(process.argv.slice(2));
