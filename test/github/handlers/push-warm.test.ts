/**
 * A push to a repository's default branch renews its warm DevBoxes (see docs/warm-start.md);
 * a push elsewhere, or a branch deleted, does not. Neither touches `.clustercode/` here, so the
 * handler makes no GitHub call at all (the client throws if it does).
 */
import { describe, expect, it } from "vitest";
import { onPush, type PushPayload } from "../../../src/github/handlers/push.js";
import type { AppServices, HandlerContext } from "../../../src/github/handlers/services.js";
import type { GitHub } from "../../../src/github/client/github.js";

function push(ref: string, deleted = false): PushPayload {
  return {
    ref,
    after: "b".repeat(40),
    deleted,
    commits: [{ added: ["src/index.ts"], modified: [], removed: [] }],
    repository: { name: "widgets", owner: { login: "acme" }, default_branch: "main" },
    sender: { login: "alice", type: "User" },
  };
}

function context(moved: string[]): HandlerContext {
  const gh = new Proxy({} as GitHub, {
    get: () => {
      throw new Error("the push handler called GitHub");
    },
  });
  const services = { defaultBranchMoved: (repo: string) => moved.push(repo) };
  return { gh, deliveryId: "d1", services: services as unknown as AppServices };
}

describe("a push and the warm DevBoxes", () => {
  it("renews those of the repository when its default branch moved", async () => {
    const moved: string[] = [];
    await onPush(push("refs/heads/main"), context(moved));
    expect(moved).toEqual(["acme/widgets"]);
  });

  it("leaves them when another branch moved or the push deleted a branch", async () => {
    const moved: string[] = [];
    await onPush(push("refs/heads/clustercode/7-r1"), context(moved));
    await onPush(push("refs/heads/main", true), context(moved));
    expect(moved).toEqual([]);
  });
});
