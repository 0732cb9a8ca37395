import { z } from "zod";
import { AppError } from "../../errors/app-error.js";

/**
 * The fields of each event's payload the app's handlers read (see their `*Payload` types),
 * checked once when a delivery is routed: a payload missing one, or with one of another type,
 * is refused with why instead of reaching a handler. Other fields are GitHub's and pass.
 */
const user = z.object({ login: z.string(), type: z.string() });
const repository = z.object({
  name: z.string(),
  full_name: z.string(),
  owner: z.object({ login: z.string() }),
  default_branch: z.string(),
});
const fullName = z.object({ full_name: z.string() });
const inRepository = { repository, sender: user };
const issue = z.object({
  number: z.number().int(),
  title: z.string(),
  body: z.string().nullish(),
});
const files = z.array(z.string()).optional();
const installationPayload = z.object({
  action: z.string(),
  installation: z.object({ id: z.number() }),
  repositories: z.array(fullName).optional(),
  repositories_added: z.array(fullName).optional(),
});

/** The payload schema of each routed event. */
export const PAYLOAD_SCHEMAS: Readonly<Record<string, z.ZodType>> = {
  issues: z.object({
    ...inRepository,
    action: z.string(),
    issue,
    label: z.object({ name: z.string() }).optional(),
  }),
  issue_comment: z.object({
    ...inRepository,
    action: z.string(),
    issue,
    comment: z.object({ body: z.string(), html_url: z.string(), user }),
  }),
  pull_request: z.object({
    ...inRepository,
    action: z.string(),
    number: z.number().int(),
    pull_request: z.object({
      head: z.object({ sha: z.string(), ref: z.string(), repo: fullName.nullish() }),
      base: z.object({ repo: fullName, sha: z.string().optional() }).optional(),
      merged: z.boolean().nullish(),
      html_url: z.string().optional(),
    }),
  }),
  pull_request_review: z.object({
    ...inRepository,
    action: z.string(),
    pull_request: z.object({
      number: z.number().int(),
      head: z.object({ ref: z.string(), repo: fullName.nullable() }),
      base: z.object({ repo: fullName }),
    }),
    review: z.object({
      id: z.number().int(),
      commit_id: z.string(),
      state: z.string(),
      body: z.string().nullish(),
      html_url: z.string(),
      user: z.object({ login: z.string() }).nullable(),
    }),
  }),
  check_run: z.object({
    ...inRepository,
    action: z.string(),
    check_run: z.object({
      name: z.string().optional(),
      external_id: z.string().nullable(),
      html_url: z.string().nullable(),
      head_sha: z.string().optional(),
      conclusion: z.string().nullish(),
      check_suite: z.object({ head_branch: z.string().nullable() }).nullish(),
      pull_requests: z.array(z.object({ number: z.number().int() })),
    }),
    requested_action: z.object({ identifier: z.string() }).nullish(),
  }),
  check_suite: z.object({
    ...inRepository,
    action: z.string(),
    check_suite: z.object({
      id: z.number().int(),
      head_sha: z.string(),
      head_branch: z.string().nullable(),
      conclusion: z.string().nullable(),
      app: z.object({ slug: z.string().optional() }).nullable(),
    }),
  }),
  push: z.object({
    ...inRepository,
    ref: z.string(),
    after: z.string(),
    deleted: z.boolean().optional(),
    commits: z.array(z.object({ added: files, modified: files, removed: files })),
  }),
  installation: installationPayload,
  installation_repositories: installationPayload,
};

/** A delivery whose payload lacks a field the app reads, or has it with another type. */
export class MalformedPayloadError extends AppError<"malformed_payload"> {
  override readonly name = "MalformedPayloadError";

  constructor(event: string, error: z.ZodError) {
    const [first] = error.issues;
    const where = first === undefined ? "" : first.path.map(String).join(".") || "(payload)";
    super(
      "malformed_payload",
      `refused the ${event} payload: ${where}: ${first?.message ?? "does not fit"}${error.issues.length > 1 ? ` (and ${error.issues.length - 1} more)` : ""}`,
    );
  }
}

/** Throws a {@link MalformedPayloadError} unless `payload` has what `event`'s handler reads. */
export function checkPayload(event: string, payload: unknown): void {
  const schema = PAYLOAD_SCHEMAS[event];
  if (schema === undefined) return;
  const checked = schema.safeParse(payload);
  if (!checked.success) throw new MalformedPayloadError(event, checked.error);
}

/** Does `payload` have what `event`'s handler reads (or is it an event with no schema)? */
export function fitsPayload(event: string, payload: unknown): boolean {
  return PAYLOAD_SCHEMAS[event]?.safeParse(payload).success ?? true;
}
