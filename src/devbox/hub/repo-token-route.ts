import type { DevBoxRecord } from "./record.js";
import { jsonResponse } from "./http-json.js";
import { RepoTokenError, type RepoTokenProvider } from "./repo-token.js";

/**
 * Answers `GET /internal/devboxes/:id/token` for an authenticated DevBox: its run's repository
 * token as `{ token, expiresAt }`. 404 when this runtime hands out none, 409 once the DevBox is
 * released or lost, 503 when GitHub failed (ask again), 403 when GitHub refused.
 */
export async function answerTokenRequest(
  provider: RepoTokenProvider | undefined,
  record: Pick<DevBoxRecord, "runId" | "state">,
): Promise<Response> {
  if (provider === undefined) {
    return jsonResponse(404, { error: "this runtime hands out no repository tokens" });
  }
  if (record.state !== "active") {
    return jsonResponse(409, { error: `the DevBox was ${record.state}` });
  }
  try {
    const { token, expiresAt } = await provider(record.runId);
    return jsonResponse(200, { token, expiresAt }, { "cache-control": "no-store" });
  } catch (error) {
    if (!(error instanceof RepoTokenError)) throw error;
    return jsonResponse(error.retryable ? 503 : 403, { error: error.message });
  }
}
