import { describe, expect, it } from "vitest";
import { RepoTokenError, RepoTokens } from "../../../src/devbox/hub/repo-token.js";
import { createRepoToken, type AppOctokit } from "../../../src/github/client/mint-repo-token.js";

/** An app Octokit that records its requests and answers from a script. */
function fakeApp(
  answer: (call: number) => Promise<{ data: { token: string; expires_at: string } }>,
) {
  const calls: unknown[][] = [];
  const app: AppOctokit = {
    request: (route, parameters) => {
      calls.push([route, parameters]);
      return answer(calls.length);
    },
  };
  return { app, calls };
}

const httpError = (status: number) => Object.assign(new Error(`HTTP ${status}`), { status });

describe("DevBox repository tokens", () => {
  it("asks for the one repository with contents: write only", async () => {
    const { app, calls } = fakeApp(() =>
      Promise.resolve({ data: { token: "ghs_abc", expires_at: "2030-01-01T01:00:00Z" } }),
    );
    const token = await createRepoToken(app, 42, "acme/widgets");
    expect(token).toEqual({ token: "ghs_abc", expiresAt: "2030-01-01T01:00:00Z" });
    expect(calls).toEqual([
      [
        "POST /app/installations/{installation_id}/access_tokens",
        { installation_id: 42, repositories: ["widgets"], permissions: { contents: "write" } },
      ],
    ]);
  });

  it("maps GitHub's answers by status, and refuses what is not owner/name", async () => {
    const cases: [number, string, boolean][] = [
      [404, "not_found", false],
      [422, "not_found", false],
      [403, "access_denied", false],
      [400, "invalid_request", false],
      [429, "unavailable", true],
      [502, "unavailable", true],
    ];
    for (const [status, code, retryable] of cases) {
      const { app } = fakeApp(() => Promise.reject(httpError(status)));
      await expect(createRepoToken(app, 1, "acme/widgets")).rejects.toMatchObject({
        name: "RepoTokenError",
        code,
        retryable,
      });
    }
    const { app, calls } = fakeApp(() => Promise.reject(new Error("unused")));
    await expect(createRepoToken(app, 1, "../widgets")).rejects.toThrow(RepoTokenError);
    await expect(createRepoToken(app, 1, "acme/widgets/x")).rejects.toThrow(
      '"acme/widgets/x" is not a GitHub owner/name',
    );
    expect(calls).toEqual([]);
  });

  it("reuses a token until it comes close to expiring, and never caches a failure", async () => {
    let now = Date.parse("2030-01-01T00:00:00Z");
    let minted = 0;
    const tokens = new RepoTokens({
      now: () => now,
      minRemainingMs: 10 * 60_000,
      mint: (repo) => {
        minted++;
        if (minted === 3) return Promise.reject(httpError(502));
        const expiresAt = new Date(now + 60 * 60_000).toISOString();
        return Promise.resolve({ token: `${repo}#${minted}`, expiresAt });
      },
    });
    expect((await tokens.tokenFor("acme/a")).token).toBe("acme/a#1");
    now += 45 * 60_000;
    expect((await tokens.tokenFor("acme/a")).token).toBe("acme/a#1");
    expect((await tokens.tokenFor("acme/b")).token).toBe("acme/b#2");
    now += 10 * 60_000;
    await expect(tokens.tokenFor("acme/a")).rejects.toMatchObject({ status: 502 });
    expect((await tokens.tokenFor("acme/a")).token).toBe("acme/a#4");
  });
});
