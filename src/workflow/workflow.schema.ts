import { Cron } from "croner";
import { z } from "zod";
import { BUILT_IN_ENGINES } from "./built-in-engines.js";
import { DURATION_PATTERN } from "./duration.js";
import { didYouMean, suggest } from "./edit-distance.js";
import { allowEntryProblem, NETWORK_SHORTCUTS } from "./network-allow.js";
import { cachePathProblem } from "./cache-path.js";

/** Ids of nodes and engines: lower-case, starting with a letter, at most 40 characters. */
export const ID_PATTERN = /^[a-z][a-z0-9_-]{0,39}$/;
const idRule = (what: string) =>
  `${what} must be lower-case letters, digits, "-" or "_", start with a letter and be at most 40 characters`;
const id = (what: string) => z.string().regex(ID_PATTERN, { error: idRule(what) });

/**
 * A mapping from ids to `value`. The ids are checked by a refinement rather than by the record's
 * key schema because zod skips the value of an entry whose key fails: one bad id would hide every
 * problem inside that entry. The refinement reports at the key (`params.target`).
 */
const idRecord = <T extends z.ZodType>(what: string, value: T) =>
  z
    .record(z.string(), value)
    .superRefine(
      (record, ctx) => {
        for (const key of Object.keys(record)) {
          if (!ID_PATTERN.test(key)) {
            ctx.addIssue({
              code: "custom",
              message: `${idRule(what)}: rename "${key}"`,
              path: [key],
              params: { target: "key" },
            });
          }
        }
      },
      { when: (payload) => typeof payload.value === "object" && payload.value !== null },
    )
    .meta({ propertyNames: { type: "string", pattern: ID_PATTERN.source } });

// Messages that start with "must" are prefixed with the field's path by the parser.
const DURATION_RULE = "must be a duration such as 30m, 2h, 1d or 1h30m (units s, m, h, d)";
const duration = (what: string) =>
  z
    .string({ error: DURATION_RULE })
    .regex(DURATION_PATTERN, { error: DURATION_RULE })
    .describe(`${what}: a duration such as 30m, 2h, 1d or 1h30m (units s, m, h, d).`);

const usd = (what: string) =>
  z
    .number({ error: "must be a number of US dollars, such as 2.5" })
    .positive({ error: "must be a number of US dollars greater than 0" })
    .describe(what);

/** The vCPU sizes an ECS task (and so a DevBox) can have. */
export const DEVBOX_CPUS = [0.25, 0.5, 1, 2, 4, 8, 16] as const;

/** Five fields of cron characters: the shape editors can check; croner checks the values. */
const CRON_SHAPE = String.raw`^\s*[0-9A-Za-z*?,/#-]+(?:\s+[0-9A-Za-z*?,/#-]+){4}\s*$`;

const cronExpression = z
  .string()
  .describe('A five-field cron expression ("minute hour day-of-month month day-of-week").')
  .meta({
    pattern: CRON_SHAPE,
    patternErrorMessage: "cron must have five fields: minute hour day-of-month month day-of-week",
  })
  .superRefine((value, ctx) => {
    const fields = value.trim().split(/\s+/);
    if (fields.length !== 5) {
      ctx.addIssue({
        code: "custom",
        message: `cron must have five fields (minute hour day-of-month month day-of-week); "${value}" has ${fields.length}`,
      });
      return;
    }
    try {
      new Cron(value, { paused: true });
    } catch (error) {
      ctx.addIssue({
        code: "custom",
        message: `cron "${value}" is not valid: ${(error as Error).message.replace(/^CronPattern: /, "")}`,
      });
    }
  });

const TIMEZONE_RULE =
  "timezone must be an IANA time zone name such as Europe/Paris or America/New_York";

const timezone = z
  .string()
  .describe("An IANA time zone such as Europe/Paris; schedules are UTC without one.")
  .superRefine((value, ctx) => {
    try {
      new Intl.DateTimeFormat("en", { timeZone: value });
    } catch {
      // The zone this one most likely misspells: the parser reads the workflow as meaning it.
      const suggestion = suggest(value, Intl.supportedValuesOf("timeZone"));
      const message =
        suggestion === undefined ? TIMEZONE_RULE : `${TIMEZONE_RULE}: ${didYouMean(suggestion)}`;
      ctx.addIssue({ code: "custom", message, params: { suggestion } });
    }
  });

const schedule = z
  .strictObject({
    cron: cronExpression,
    timezone: timezone.optional(),
    brief: z.string().optional().describe("The brief a scheduled run starts with."),
  })
  .describe("A cron schedule that starts a run (and opens a tracking issue for it).");

const triggers = z
  .strictObject({
    label: z
      .union([z.string().min(1), z.array(z.string().min(1)).min(1)], {
        error: "must be a label or a list of labels",
      })
      .optional()
      .describe("Labelling an issue with this label (or any of these labels) starts a run."),
    command: z
      .boolean()
      .default(true)
      .describe('Whether "/clustercode run [name]" comments start a run (default true).'),
    schedule: z.array(schedule).min(1).optional().describe("Cron schedules that start runs."),
  })
  .describe("What starts a run: at least one trigger.")
  .refine((on) => on.label !== undefined || on.command || on.schedule !== undefined, {
    error: "on: needs at least one trigger: label, command: true or schedule",
  })
  .meta({
    if: { properties: { command: { const: false } }, required: ["command"] },
    then: { anyOf: [{ required: ["label"] }, { required: ["schedule"] }] },
  });

/** The most DevBoxes one workflow may keep warm (`devbox.warm`); the host caps the total too. */
export const WARM_DEVBOXES_MAX = 8;

/** A path of a `devbox.cache` entry: relative, inside the checkout, without `..`. */
const cachePath = z.string().superRefine((path, ctx) => {
  const problem = cachePathProblem(path);
  if (problem !== undefined) ctx.addIssue({ code: "custom", message: problem });
});

/** One `devbox.cache` entry, in the manner of GitHub Actions' `actions/cache`. */
const cacheEntry = z
  .strictObject({
    key: z
      .array(cachePath.describe("A file of the checkout, such as package-lock.json."))
      .min(1)
      .describe(
        "Files whose contents make the cache key, with the setup commands and the paths: change one and the cache misses.",
      ),
    paths: z
      .array(cachePath.describe("A directory or file of the checkout, such as node_modules."))
      .min(1)
      .describe("What setup makes and the cache keeps: relative to the checkout, inside it."),
  })
  .describe(
    "Restored before setup when its key was saved; saved after a successful setup when it was not. Setup commands see CLUSTERCODE_CACHE_HIT=true when every entry was restored.",
  );

const devbox = z
  .strictObject({
    image: z
      .string()
      .min(1)
      .optional()
      .describe("Container image of the DevBox; default: the app's configured DevBox image."),
    cpu: z
      .number()
      .meta({ enum: [...DEVBOX_CPUS] })
      .refine((cpu) => (DEVBOX_CPUS as readonly number[]).includes(cpu), {
        error: `cpu must be one of ${DEVBOX_CPUS.join(", ")} (vCPU)`,
      })
      .optional()
      .describe("vCPUs of the DevBox: 0.25, 0.5, 1, 2, 4, 8 or 16."),
    memory: z
      .string()
      .regex(/^[1-9][0-9]*(MiB|GiB)$/, { error: "memory must look like 512MiB or 8GiB" })
      .optional()
      .describe("Memory of the DevBox, such as 512MiB or 8GiB."),
    setup: z
      .array(z.string().min(1))
      .optional()
      .describe("Commands run once each time a DevBox is claimed, with bash -eo pipefail."),
    warm: z
      .int()
      .min(0)
      .max(WARM_DEVBOXES_MAX)
      .optional()
      .describe(
        `How many DevBoxes to keep ready (cloned at the default branch's head and set up) for this repository and this devbox spec, so that a claim takes one at once; 0 to ${WARM_DEVBOXES_MAX}, default 0. A warm DevBox is capacity paid for while it waits; the host caps the total (CLUSTERCODE_WARM_MAX).`,
      ),
    cache: z
      .array(cacheEntry)
      .optional()
      .describe(
        "What setup makes that later DevBoxes of the repository may reuse, such as node_modules keyed by package-lock.json.",
      ),
    secrets: z
      .array(
        z.string().regex(/^[A-Z_][A-Z0-9_]{0,127}$/, {
          error: "secret names are upper-case environment variable names such as NPM_TOKEN",
        }),
      )
      .optional()
      .describe(
        "Names of secrets injected as environment variables at container start; never values.",
      ),
    network: z
      .strictObject({
        allow: z
          .array(
            z
              .string()
              .superRefine((entry, ctx) => {
                const problem = allowEntryProblem(entry);
                if (problem !== undefined) ctx.addIssue({ code: "custom", message: problem });
              })
              .describe(
                `A host (api.example.com) or a shortcut: ${Object.keys(NETWORK_SHORTCUTS).join(", ")}.`,
              ),
          )
          .describe(
            "Hosts the DevBox may reach (HTTPS, through the hub); unset: the package registries and the repository's host.",
          ),
      })
      .optional()
      .describe("The DevBox's network: everything not allowed here is refused."),
    git: z
      .strictObject({
        allow_workflow_changes: z
          .boolean()
          .optional()
          .describe(
            "Let the run push changes under .github/workflows/; default false (such pushes are refused).",
          ),
      })
      .optional()
      .describe("What the DevBox's pushes (which go through the runtime) may change."),
  })
  .describe("The isolated container each run claims.");

const runBudget = z
  .strictObject({
    max_cost_usd: usd(
      "Most the whole run may spend on agents and judges, in US dollars.",
    ).optional(),
    wall_clock: duration("Longest the whole run may take").optional(),
  })
  .describe("Limits for the whole run.");

/** Most rework rounds a workflow may allow. */
export const MAX_REWORK_ROUNDS = 10;
/** Rework rounds when `rework.max_rounds` is not set. */
export const DEFAULT_REWORK_ROUNDS = 3;

const rework = z
  .strictObject({
    node: z
      .string()
      .describe(
        "The node a succeeded run re-opens at when its work is sent back: a run, loop or prototype.",
      ),
    max_rounds: z
      .int()
      .meta({ minimum: 1, maximum: MAX_REWORK_ROUNDS })
      .optional()
      .describe(
        `How often one run may be re-opened (1-${MAX_REWORK_ROUNDS}, default ${DEFAULT_REWORK_ROUNDS}).`,
      ),
  })
  .describe(
    "What happens when a succeeded run's work is sent back (a review asking for changes, a failing check, a conflict, /rework): the run re-opens at node with that feedback.",
  );

const admission = z
  .strictObject({
    max_active_runs: z
      .int()
      .positive()
      .optional()
      .describe("Runs of this workflow active at once; more are queued."),
    max_awaiting_approval: z
      .int()
      .positive()
      .optional()
      .describe("When this many runs wait on people, no new run starts."),
    resume_below: z
      .int()
      .nonnegative()
      .optional()
      .describe("New runs start again once fewer than this many runs wait on people."),
  })
  .describe("Admission limits: runs beyond them wait in a queue instead of being refused.")
  .refine(
    (a) =>
      a.resume_below === undefined ||
      a.max_awaiting_approval === undefined ||
      a.resume_below <= a.max_awaiting_approval,
    {
      error: "resume_below must not be greater than max_awaiting_approval",
      path: ["resume_below"],
    },
  );

/** `{env:NAME}` naming what looks like a credential (…_KEY, …_TOKEN, …SECRET…, …PASSWORD…). */
const CREDENTIAL_IN_ARGV =
  /\{env:[A-Za-z0-9_]*(KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL)[A-Za-z0-9_]*\}/i;

const tokenPath = (what: string) =>
  z
    .string()
    .min(1)
    .describe(`Dotted path to the number of ${what} in the JSON the engine prints last.`);

const engine = z
  .strictObject({
    command: z
      .array(z.string())
      .min(1)
      .describe('The agent CLI as an argument list; "{prompt_file}" and "{model}" are substituted.')
      .refine((argv) => argv.some((arg) => arg.includes("{prompt_file}")), {
        error:
          'an engine command must pass the prompt as a file: put "{prompt_file}" in one argument',
      })
      .refine((argv) => !argv.some((arg) => CREDENTIAL_IN_ARGV.test(arg)), {
        error:
          "an engine command must not put a key into argv, where other processes can read it: {env:…} is for endpoints; let the CLI read its key from the environment",
      })
      .meta({ contains: { type: "string", pattern: String.raw`\{prompt_file\}` } }),
    cost: z
      .strictObject({
        json_path: z
          .string()
          .min(1)
          .describe("Dotted path to the cost in US dollars in the JSON the engine prints last."),
      })
      .optional()
      .describe("Where the engine reports what a turn cost."),
    usage: z
      .strictObject({
        input_tokens: tokenPath("input tokens (cached ones included)"),
        output_tokens: tokenPath("output tokens"),
        cached_input_tokens: tokenPath("input tokens served from a prompt cache").optional(),
      })
      .optional()
      .describe(
        "Where the engine reports a turn's tokens; without cost, the turn is priced from them and the node's model.",
      ),
  })
  .describe("An agent CLI the workflow's nodes can use.");

const approver = z.string().regex(/^@[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})(?:\/[A-Za-z0-9._-]+)?$/, {
  error: 'approvers are "@login" or "@org/team"',
});
const approvers = z
  .array(approver)
  .min(1)
  .describe('People ("@login") and teams ("@org/team") allowed to answer approvals.');

const agent = z
  .strictObject({
    engine: id("engine").describe(
      `A built-in engine (${BUILT_IN_ENGINES.join(", ")}) or one declared under engines.`,
    ),
    model: z.string().min(1).optional().describe("The model the engine runs."),
  })
  .describe("The agent that does the work.");

const judge = z
  .strictObject({
    provider: z
      .enum(["anthropic", "openai"], { error: "judge provider must be anthropic or openai" })
      .describe("The LLM provider that judges."),
    model: z.string().min(1).describe("The provider's model."),
  })
  .describe("An LLM that judges, with a forced structured answer.");

const gate = z
  .strictObject({
    name: z.string().min(1).describe("The gate's name, shown in iteration tables."),
    run: z.string().min(1).describe("A command; exit 0 passes the gate."),
  })
  .describe("A command that must pass.");

/** The types a node output may have. */
export const OUTPUT_TYPES = ["string", "number", "boolean", "json"] as const;

const output = z
  .strictObject({
    type: z
      .enum(OUTPUT_TYPES, { error: `output type must be one of ${OUTPUT_TYPES.join(", ")}` })
      .describe("What the value must be: string, number, boolean or json."),
    description: z.string().min(1).optional().describe("What the value means."),
  })
  .describe("A typed value the node writes to the run's state.");

const outputs = z
  .record(
    z.string().regex(/^[a-z][a-z0-9_]{0,39}$/, {
      error: 'output names are lower-case letters, digits and "_", starting with a letter',
    }),
    output,
  )
  .optional()
  .describe(
    "Values the node writes to the file named by CLUSTERCODE_OUTPUT_FILE (name=value lines, name<<DELIM blocks, or one JSON object); later nodes read them all as JSON from CLUSTERCODE_OUTPUTS_FILE.",
  );

const inputs = z
  .array(z.string().min(1))
  .optional()
  .describe("Outputs of earlier nodes this node reads: each must be written on a path to it.");

const KIND_DESCRIPTIONS = {
  run: "run: one agent turn or one command script, in the DevBox.",
  loop: "loop: an agent iterates toward a goal until every gate passes.",
  prototype: "prototype: 2 to 6 variants race the same brief.",
  decision: "decision: routes on one outgoing labelled edge.",
  approval: "approval: waits for a permitted person to approve or reject.",
} as const;
const kindOf = <K extends keyof typeof KIND_DESCRIPTIONS>(kind: K) =>
  z.literal(kind).describe(`The node kind. ${KIND_DESCRIPTIONS[kind]}`);

const common = {
  title: z.string().min(1).optional().describe("Display name of the node."),
  timeout: duration("Wall clock of one attempt").optional(),
  idempotent: z
    .boolean()
    .optional()
    .describe(
      "Whether the node may be re-run after its DevBox was lost mid-command (default true). Set false for deploys.",
    ),
};

/**
 * A property a JSON Schema condition refuses. Editors show their own words for it; the
 * description says why on hover.
 */
const notAllowed = (why: string) => ({ not: {}, description: why });
const BOTH = "a run node has either run or agent and prompt, not both";

const runNode = z
  .strictObject({
    kind: kindOf("run"),
    ...common,
    agent: agent.optional(),
    prompt: z.string().min(1).optional().describe("What the agent is asked to do (with agent)."),
    run: z.string().min(1).optional().describe("A command script (instead of agent and prompt)."),
    outputs,
    inputs,
  })
  .describe("One agent turn (agent and prompt) or one command script (run).")
  .superRefine((node, ctx) => {
    const hasAgent = node.agent !== undefined || node.prompt !== undefined;
    if (hasAgent && node.run !== undefined) {
      ctx.addIssue({
        code: "custom",
        message: BOTH,
      });
    } else if (!hasAgent && node.run === undefined) {
      ctx.addIssue({
        code: "custom",
        message: "a run node needs run (a command) or agent and prompt",
      });
    } else if (hasAgent && node.agent === undefined) {
      ctx.addIssue({
        code: "custom",
        message: "prompt needs an agent: { engine, model }",
        path: ["prompt"],
      });
    } else if (hasAgent && node.prompt === undefined) {
      ctx.addIssue({ code: "custom", message: "agent needs a prompt", path: ["agent"] });
    }
  })
  .meta({
    if: { required: ["run"] },
    then: { properties: { agent: notAllowed(BOTH), prompt: notAllowed(BOTH) } },
    else: { required: ["agent", "prompt"] },
  });

const loopNode = z
  .strictObject({
    kind: kindOf("loop"),
    ...common,
    goal: z.string().min(1).describe("What the agent works toward, iteration after iteration."),
    agent,
    gates: z.array(gate).optional().describe("Commands that must all pass for the loop to end."),
    budget: z
      .strictObject({
        // Ranges checked by graph rules (with their own messages) are hints for editors only.
        max_iterations: z
          .int()
          .meta({ minimum: 1, maximum: 50 })
          .optional()
          .describe("Most iterations (1-50); required."),
        max_cost_per_iteration_usd: usd(
          "Most one iteration may cost; over it the loop ends exhausted.",
        ).optional(),
        max_daily_cost_usd: usd(
          "Most this workflow may spend on this loop per repository and UTC day.",
        ).optional(),
        wall_clock: duration("Longest the loop may take").optional(),
      })
      .optional()
      .describe("The loop's budget."),
  })
  .describe("Iterates toward a goal until every gate passes or the budget runs out.");

const variant = z
  .strictObject({
    engine: id("engine").describe(
      `A built-in engine (${BUILT_IN_ENGINES.join(", ")}) or one declared under engines.`,
    ),
    model: z.string().min(1).optional().describe("The model the engine runs."),
  })
  .describe("One contender of a prototype race.");

const prototypeNode = z
  .strictObject({
    kind: kindOf("prototype"),
    ...common,
    brief: z.string().min(1).describe("What every variant is asked to build."),
    variants: z
      .array(variant)
      .meta({ minItems: 2, maxItems: 6 })
      .describe("2 to 6 variants, each in its own DevBox on its own branch."),
    gates: z.array(gate).optional().describe("Commands a variant must pass to count."),
    select: z
      .enum(["first", "judge"])
      .default("first")
      .describe(
        "first: the first variant to pass wins; judge: a judge picks among those that pass.",
      ),
    judge: judge.optional(),
  })
  .describe("Variants race the same brief; the winner's branch becomes the run's branch.")
  .refine((node) => node.select !== "judge" || node.judge !== undefined, {
    error: "select: judge needs a judge: { provider, model }",
    path: ["select"],
  })
  .meta({
    if: { properties: { select: { const: "judge" } }, required: ["select"] },
    then: { required: ["judge"] },
  });

const decisionNode = z
  .strictObject({
    kind: kindOf("decision"),
    ...common,
    evaluator: z
      .enum(["status", "deterministic", "agent"], {
        error: "evaluator must be status, deterministic or agent",
      })
      .describe(
        "status: the previous node's outcome; deterministic: a command's exit code; agent: an LLM judge.",
      ),
    run: z
      .string()
      .min(1)
      .optional()
      .describe("The command of a deterministic decision: exit 0 is pass."),
    question: z.string().min(1).optional().describe("What an agent decision asks its judge."),
    judge: judge.optional(),
  })
  .describe("Routes on exactly one outgoing labelled edge.")
  .superRefine((node, ctx) => {
    const need = (field: "run" | "question" | "judge", why: string) => {
      if (node[field] === undefined)
        ctx.addIssue({ code: "custom", message: why, path: ["evaluator"] });
    };
    const forbid = (field: "run" | "question" | "judge") => {
      if (node[field] !== undefined) {
        ctx.addIssue({
          code: "custom",
          message: `${field} is not used by a ${node.evaluator} decision: remove it`,
          path: [field],
        });
      }
    };
    if (node.evaluator === "deterministic") {
      need("run", "a deterministic decision needs run: a command whose exit 0 means pass");
      forbid("question");
      forbid("judge");
    } else if (node.evaluator === "agent") {
      need("question", "an agent decision needs a question for its judge");
      need("judge", "an agent decision needs judge: { provider, model }");
      forbid("run");
    } else {
      forbid("run");
      forbid("question");
      forbid("judge");
    }
  })
  .meta({ allOf: [...evaluatorNeeds()] });

/** The decision superRefine above, as JSON Schema conditions on `evaluator`. */
function* evaluatorNeeds() {
  const when = (evaluator: string, needs: string[], forbids: string[]) => ({
    if: { properties: { evaluator: { const: evaluator } }, required: ["evaluator"] },
    then: {
      ...(needs.length === 0 ? {} : { required: needs }),
      properties: Object.fromEntries(
        forbids.map((field) => [
          field,
          notAllowed(`${field} is not used by a ${evaluator} decision: remove it`),
        ]),
      ),
    },
  });
  yield when("deterministic", ["run"], ["question", "judge"]);
  yield when("agent", ["question", "judge"], ["run"]);
  yield when("status", [], ["run", "question", "judge"]);
}

const approvalNode = z
  .strictObject({
    kind: kindOf("approval"),
    title: common.title,
    idempotent: common.idempotent,
    timeout: duration("How long people have to answer (1h to 30d, default 72h)").optional(),
    on_timeout: z
      .string()
      .min(1)
      .optional()
      .describe("The label taken when nobody answers in time (default rejected)."),
    approvers: approvers.optional(),
    message: z.string().optional().describe("What the people asked should check."),
    prevent_self_approval: z
      .boolean()
      .optional()
      .describe("Refuse an answer from the person who started the run."),
  })
  .describe("Stops the run until a permitted person approves or rejects, or the window lapses.");

/** The five node kinds. */
export const NODE_KINDS = ["run", "loop", "prototype", "decision", "approval"] as const;

const node = z.discriminatedUnion(
  "kind",
  [runNode, loopNode, prototypeNode, decisionNode, approvalNode],
  {
    error: (issue) =>
      issue.code === "invalid_union" ? `kind must be one of ${NODE_KINDS.join(", ")}` : undefined,
  },
);

const edge = z
  .strictObject({
    from: z.string().describe("The source node."),
    to: z.string().describe("The target node, or a terminal: done, failed, escalated."),
    label: z
      .string()
      .min(1)
      .optional()
      .describe(
        "The outcome this edge is taken on (decisions and approvals; exhausted for give-up).",
      ),
    back: z.boolean().optional().describe("Marks an intended cycle; capped by max_traversals."),
    max_traversals: z
      .int()
      .meta({ minimum: 1, maximum: 20 })
      .optional()
      .describe("How often the token may cross this back-edge in one run (1-20, default 3)."),
  })
  .describe("A transition between nodes.")
  // max_traversals caps a back-edge; on a forward edge it is refused (back-edge-cap).
  .meta({
    if: { not: { properties: { back: { const: true } }, required: ["back"] } },
    then: {
      properties: {
        max_traversals: notAllowed("max_traversals caps a back-edge: add back: true or remove it"),
      },
    },
  });

/** A workflow file, version 1. */
export const workflowSchema = z
  .strictObject({
    version: z.literal(1, { error: "version must be 1" }).describe("The language version: 1."),
    name: z
      .string()
      .regex(/^[a-z0-9][a-z0-9-]{0,39}$/, {
        error: 'name must be lower-case letters, digits and "-", at most 40 characters',
      })
      .describe("The workflow's name, used by /clustercode run NAME."),
    on: triggers,
    devbox: devbox.optional(),
    budget: runBudget.optional(),
    admission: admission.optional(),
    engines: idRecord("engine", engine)
      .optional()
      .describe(`Agent CLIs beyond the built-in ${BUILT_IN_ENGINES.join(" and ")}.`),
    approvers: approvers.optional(),
    nodes: idRecord("node id", node)
      .describe("The graph's nodes (at most 20); the first is the entry.")
      .refine((nodes) => Object.keys(nodes).length > 0, {
        error: "nodes: needs at least one node",
      }),
    edges: z.array(edge).default([]).describe("The graph's edges."),
    rework: rework.optional(),
  })
  .describe("A ClusterCode workflow: a small graph of agent and command nodes.");

/** A parsed workflow, version 1. */
export type Workflow = z.output<typeof workflowSchema>;
/** One node of a workflow. */
export type WorkflowNode = Workflow["nodes"][string];
/** A node kind. */
export type NodeKind = WorkflowNode["kind"];
/** One edge of a workflow. */
export type Edge = Workflow["edges"][number];
/** A gate command. */
export type Gate = z.output<typeof gate>;
