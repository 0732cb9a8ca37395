import type { Command } from "./command.js";

/** One subcommand: how it is called, what it does, its `--help`, and its module (loaded to run). */
export interface CommandEntry {
  /** The command with its arguments, as the overview lists it. */
  synopsis: string;
  /** What it does, in a few words. */
  summary: string;
  /** Its `--help`: the usage line, what it does, its options. */
  help: string;
  /** Imports the command only when it runs, so `validate` never loads Probot or the AWS SDK. */
  load: () => Promise<Command>;
}

const RUN_OPTIONS = `  --state-dir D        where runs are kept (else CLUSTERCODE_STATE_DIR, else
                       $XDG_STATE_HOME/clustercode); any number of commands may use one at once
  --format human|json  json: the run's summary as the last line of stdout`;

/** The options of the commands that drive a run (`approve`, `resume`, ...). */
const DRIVE_OPTIONS = `  -q, --quiet          one line per command, without its output
${RUN_OPTIONS}`;

const control =
  (name: "resume" | "approve" | "reject" | "retry" | "cancel" | "resolveRun") => async () =>
    (await import("./control-commands.js"))[name];

/** Every subcommand, one entry each, in the order the overview lists them. */
export const COMMANDS: Record<string, CommandEntry> = {
  doctor: {
    synopsis: "doctor",
    summary: "check this machine's prerequisites and which executor DevBoxes use here",
    help: `Usage: clustercode doctor

Checks what runs need on this machine, each with ✓ or ✗ and what to install on this OS:
Node.js 22 or later, git, bubblewrap (and whether it can create the DevBoxes' namespaces), and
a container engine (docker or podman) that answers, for CLUSTERCODE_EXECUTOR=container. Then
says which executor DevBoxes will use here. Exit 1 when that executor cannot run DevBoxes (or
Node.js or git is missing).`,
    load: async () => (await import("./doctor-command.js")).default,
  },
  init: {
    synopsis: "init",
    summary: "write a first .clustercode/workflow.yml (runs offline, no API key)",
    help: `Usage: clustercode init

Writes .clustercode/workflow.yml at the root of the current git repository: a run node, a loop
with a command gate and an approval, using only commands and a stand-in shell agent. Refuses to
overwrite an existing workflow (exit 4).`,
    load: async () => (await import("./init-command.js")).default,
  },
  validate: {
    synopsis: "validate [FILE...]",
    summary: "check workflows",
    help: `Usage: clustercode validate [FILE...] [--format human|json|github] [--strict]

Checks workflow files; without FILE, the repository's .clustercode/workflow.yml and
.clustercode/workflows/*.yml (found from any subdirectory, up to the git root). Exit 1 when a
file has errors.

  --format human|json|github   github: workflow commands that annotate a pull request
  --strict                     also check this host for a local run: each agent CLI the
                               nodes start is on PATH (engine-command-missing)`,
    load: async () => (await import("./validate-command.js")).default,
  },
  list: {
    synopsis: "list",
    summary: "the repository's workflows, their triggers and nodes",
    help: `Usage: clustercode list [--format human|json]

Lists the repository's workflows (.clustercode/workflow.yml and .clustercode/workflows/*.yml,
found from any subdirectory): each one's name, file, what starts it and its nodes, entry first.
A file that does not validate is listed as (invalid).

  --format human|json  json: {"workflows": [{name, file, valid, triggers, nodes}]}`,
    load: async () => (await import("./list-command.js")).default,
  },
  graph: {
    synopsis: "graph [FILE|NAME]",
    summary: "print a workflow as a Mermaid flowchart",
    help: `Usage: clustercode graph [FILE|NAME]

Prints the workflow as a Mermaid flowchart; an invalid workflow prints its findings (exit 1).
Without an argument, the workflow run takes: .clustercode/workflow.yml, or the only one.`,
    load: async () => (await import("./graph-command.js")).default,
  },
  run: {
    synopsis: "run [FILE|NAME]",
    summary: "run a workflow locally",
    help: `Usage: clustercode run [FILE|NAME] [options]

Runs a workflow against a local git repository, from its checked-out branch; the work lands on
the branch clustercode/local-RUN. FILE is a workflow file, NAME a workflow's name: field; without
either, the repository's .clustercode/workflow.yml, or its only workflow (with several and no
workflow.yml, it lists them). Prints each command's output as it comes, prefixed by its node
([build] ..., [design/v2] ... for a prototype's variant). Exit 0 when the run succeeds, 1 when
it fails, 3 when it waits for an approval.

  --repo DIR           the repository (default: the one the current directory is in)
  --brief TEXT         what the run is asked to do
  --brief-file F       the brief, from a file
  -e, --event FILE     a GitHub webhook payload (issues labeled, or issue_comment with
                       /clustercode run [NAME]): it picks the workflow as the app would and the
                       issue is the brief, as act -e
  --from NODE          start at NODE instead of the entry, then follow the graph
  --only NODE          run NODE alone; the run ends with its outcome
  -n, --dry-run        validate and print the path when every node succeeds, with what each
                       node would run; nothing starts
  -q, --quiet          one line per command, without its output
  --as NAME            who started the run (default $USER)
  --include-uncommitted  start from the working tree as it is (committed to the run branch);
                       without it, uncommitted changes are left out with a warning
Ctrl-C stops the run's DevBoxes and exits 130; clustercode resume RUN continues it.
${RUN_OPTIONS}`,
    load: async () => (await import("./run-command.js")).default,
  },
  status: {
    synopsis: "status [RUN]",
    summary: "where a run (or every run of --repo) stands",
    help: `Usage: clustercode status [RUN] [--repo DIR]

Where RUN stands: its workflow, status, start, duration and branch, then each visit of a node
(numbered per node: visit 2 is the node's second time) with its attempt, outcome and duration.
Without RUN, the runs of the repository (the one the current directory is in, else --repo DIR;
outside one, exit 2) as a table. A running run that no process drives shows as interrupted.

  --repo DIR           the repository whose runs to list
${RUN_OPTIONS}`,
    load: async () => (await import("./status-command.js")).status,
  },
  log: {
    synopsis: "log RUN [--follow]",
    summary: "the run's evidence log (--follow: live, with command output)",
    help: `Usage: clustercode log RUN [--follow]

The run's evidence log, in order. Works while another process drives the run.

  -f, --follow         then print new entries and the DevBoxes' output as they come, until the
                       run ends or waits on people; exits with the run's exit code
${RUN_OPTIONS}`,
    load: async () => (await import("./status-command.js")).log,
  },
  prune: {
    synopsis: "prune [--older-than AGE]",
    summary: "delete ended runs' branches and DevBox checkouts",
    help: `Usage: clustercode prune [--older-than AGE] [--dry-run] [--repo DIR] [--state-dir D]

Deletes the run branches (clustercode/local-RUN and its variants' branches) and the DevBox
checkouts of the repository's ended runs (succeeded, failed, cancelled, escalated). Their
records and evidence stay: status, log and scorecard still read them. A checked-out branch is
kept, with a warning.

  --older-than AGE     only runs that ended before a date (2026-11-01) or AGE ago (7d, 12h)
  -n, --dry-run        print what would be deleted
  --repo DIR           the repository (default: the one the current directory is in)
  --state-dir D        where runs are kept (else CLUSTERCODE_STATE_DIR, else
                       $XDG_STATE_HOME/clustercode)`,
    load: async () => (await import("./prune-command.js")).default,
  },
  scorecard: {
    synopsis: "scorecard [--since WHEN]",
    summary: "how often each judge was overturned, per provider and model",
    help: `Usage: clustercode scorecard [--since WHEN] [--repo R] [--state-dir D] [--format human|json]

Every verdict of an agent decision's or a prototype's judge in the runs of the repository, per
judge provider and model: verdicts, how many were overturned (a person rejected at the next
approval after the judge said go, a gate failed on the judged commit, the pull request was
closed unmerged, or a person retried past it), the overturn rate, and the share of verdicts
given independently of the work's author (another provider or model).

  --since WHEN         only runs started since a date (2026-11-01) or a duration ago (7d, 12h)
  --repo R             the repository (default: the one the current directory is in); owner/name
                       for the app's runs, with CLUSTERCODE_DYNAMODB_ENDPOINT set to its table
  --state-dir D        where runs are kept (else CLUSTERCODE_STATE_DIR, else
                       $XDG_STATE_HOME/clustercode)
  --format human|json  json: the figures and every verdict, on one line`,
    load: async () => (await import("./scorecard-command.js")).scorecardCommand,
  },
  ui: {
    synopsis: "ui [--port N]",
    summary: "serve the run pages on 127.0.0.1",
    help: `Usage: clustercode ui [--port N] [--repo DIR] [--state-dir D]

Serves the run pages of the state directory on 127.0.0.1 (prints the URL): each run's graph,
timeline, loops, prototypes and spend, live, with Approve and Reject on a waiting approval.
Runs started in other terminals show as they go; an answer given here continues the run in
this process.

  --port N             the port (default: any free one)
  --repo DIR           the repository whose runs the index lists (default .)
  --state-dir D        the state directory (else CLUSTERCODE_STATE_DIR, else
                       $XDG_STATE_HOME/clustercode)`,
    load: async () => (await import("./ui-command.js")).default,
  },
  approve: {
    synopsis: "approve RUN",
    summary: "answer its approval",
    help: `Usage: clustercode approve RUN [--node N] [--as NAME] [--note TEXT]

Approves the approval RUN waits on, then continues the run in this process until it ends or
waits again, printing its commands' output. Exit 4 when RUN waits on no approval (or has
ended).

  --node N             the approval node, when it matters
  --as NAME            who answers (default $USER)
  --note TEXT          a note kept with the answer
${DRIVE_OPTIONS}`,
    load: control("approve"),
  },
  reject: {
    synopsis: "reject RUN",
    summary: "reject its approval",
    help: `Usage: clustercode reject RUN [--node N] [--as NAME] [--note REASON]

Rejects the approval RUN waits on, then continues the run (it takes the rejected edge).

  --node N             the approval node, when it matters
  --as NAME            who answers (default $USER)
  --note REASON        why
${DRIVE_OPTIONS}`,
    load: control("reject"),
  },
  resume: {
    synopsis: "resume RUN",
    summary: "continue a run whose process stopped; fires due timers",
    help: `Usage: clustercode resume RUN

Continues a run whose process stopped, firing the timers that fell due meanwhile. Exit 4 when
the run has already ended.
${DRIVE_OPTIONS}`,
    load: control("resume"),
  },
  retry: {
    synopsis: "retry RUN",
    summary: "re-enter a failed run (or a lost node) with a new attempt",
    help: `Usage: clustercode retry RUN [--reset-budget] [--as NAME]

Re-enters a failed run at the node it stopped at (or a lost node) with a new attempt. Budgets,
spend and the run's wall clock carry over: a retry that needs a used-up budget is refused
(exit 4) and says which.

  --reset-budget       give the retried node fresh budgets (recorded with who asked)
  --as NAME            who asks (default $USER)
${DRIVE_OPTIONS}`,
    load: control("retry"),
  },
  cancel: {
    synopsis: "cancel RUN",
    summary: "stop the run and its DevBoxes",
    help: `Usage: clustercode cancel RUN [--as NAME]

Stops the run and its DevBoxes; exit 0 once it is cancelled, 4 when it had already ended.
${DRIVE_OPTIONS}`,
    load: control("cancel"),
  },
  resolve: {
    synopsis: "resolve RUN succeeded|failed",
    summary: "answer a lost, non-idempotent node",
    help: `Usage: clustercode resolve RUN succeeded|failed [--as NAME] [--note TEXT]

Answers a lost, non-idempotent node after checking the real world, then continues the run.
${DRIVE_OPTIONS}`,
    load: control("resolveRun"),
  },
  devbox: {
    synopsis: "devbox",
    summary: "the DevBox agent (started by executors)",
    help: `Usage: clustercode devbox --api URL --devbox ID [--token-stdin]
       clustercode devbox --api URL --warm ID --token-stdin

The DevBox agent, started by executors inside a fresh clone; the token comes from
CLUSTERCODE_DEVBOX_TOKEN, never from argv.

  --api URL            the hub's internal DevBox API
  --devbox ID          this DevBox's id
  --warm ID            a warm ECS task's identity: set up, then wait for a claim
  --token-stdin        read the token from stdin instead (its first line)`,
    load: async () => (await import("./devbox-command.js")).default,
  },
};
