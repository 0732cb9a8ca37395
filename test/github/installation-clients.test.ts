import { describe, expect, it } from "vitest";
import type { GitHub, GitHubAuth } from "../../src/github/client/github.js";
import { InstallationClients } from "../../src/github/client/installation-clients.js";

/** Probot's `app.auth`, counting the clients it makes (each a distinct object). */
function countingAuth(fail: Set<number> = new Set()) {
  const made: number[] = [];
  const auth: GitHubAuth = {
    installation: (id) => {
      made.push(id);
      if (fail.has(id)) return Promise.reject(new Error(`installation ${id} is gone`));
      return Promise.resolve({ installationId: id } as unknown as GitHub);
    },
    app: () => Promise.resolve({ app: true } as unknown as GitHub),
  };
  return { auth, made };
}

describe("InstallationClients", () => {
  it("makes one client per installation and hands the same one out again", async () => {
    const { auth, made } = countingAuth();
    const clients = new InstallationClients(auth);
    const first = await clients.installation(7);
    expect(await clients.installation(7)).toBe(first);
    expect(await clients.installation(8)).not.toBe(first);
    expect(made).toEqual([7, 8]);
  });

  it("keeps at most its bound, forgetting the least recently used installation", async () => {
    const { auth, made } = countingAuth();
    const clients = new InstallationClients(auth, 3);
    for (let id = 1; id <= 1000; id++) await clients.installation(id);
    expect(clients.size).toBe(3);
    // 998..1000 are kept; 1 was forgotten long ago and is made again.
    made.length = 0;
    await clients.installation(999);
    await clients.installation(1);
    expect(made).toEqual([1]);
    expect(clients.size).toBe(3);
    // Making 1 again forgot 998, the least recently used; 999 was used since.
    await clients.installation(999);
    await clients.installation(998);
    expect(made).toEqual([1, 998]);
  });

  it("does not keep a client that failed to be made", async () => {
    const fail = new Set([5]);
    const { auth, made } = countingAuth(fail);
    const clients = new InstallationClients(auth);
    await expect(clients.installation(5)).rejects.toThrow("installation 5 is gone");
    expect(clients.size).toBe(0);
    fail.delete(5);
    await expect(clients.installation(5)).resolves.toEqual({ installationId: 5 });
    expect(made).toEqual([5, 5]);
  });
});
