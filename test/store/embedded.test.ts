import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DynamoStore } from "../../src/store/dynamo-store.js";
import { openStore, startEmbeddedDynamo } from "../../src/store/embedded.js";
import type { StoredRun } from "../../src/store/store.js";
import { testClient } from "./dynalite-fixture.js";
import { decodeSettings } from "../../src/settings/index.js";

const HOLD_STORE = fileURLToPath(new URL("./fixtures/hold-store.js", import.meta.url));

let stateDir = "";
beforeEach(async () => {
  stateDir = await mkdtemp(join(tmpdir(), "clustercode-store-"));
});
afterEach(async () => {
  await rm(stateDir, { recursive: true, force: true });
});

const run: StoredRun = {
  runId: "local-1",
  version: 1,
  repo: "/home/me/project",
  workflow: "fix.yml",
  status: "awaiting_input",
  snapshot: { node: "approve" },
  outbox: [],
  createdAt: 5,
  updatedAt: 5,
};

/** Starts the child that opens the store and writes a run, and waits for its "ready". */
async function startHolder(runId: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, [HOLD_STORE, stateDir, runId], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on("data", (chunk: Buffer) => {
      if (chunk.toString().includes("ready")) resolve();
    });
    child.once("exit", (code) => reject(new Error(`holder exited ${code}: ${stderr}`)));
  });
  return child;
}

describe("embedded store", () => {
  it("keeps runs and evidence across a restart on the same state directory", async () => {
    const first = await openStore({ stateDir, settings: decodeSettings({}).store });
    await first.store.createRun(run);
    await first.store.writeAfterEffects([{ runId: "local-1", seq: 0, at: 6, entry: "e" }], []);
    await first.close();

    const second = await openStore({ stateDir, settings: decodeSettings({}).store });
    try {
      expect(await second.store.getRun("local-1")).toEqual(run);
      expect(await second.store.listEvidence("local-1")).toHaveLength(1);
      expect(await second.store.saveRun({ ...run, version: 2, status: "running" })).toBe(true);
    } finally {
      await second.close();
    }
  });

  it("shares the store with a live process, and keeps what a SIGKILLed one wrote", async () => {
    const child = await startHolder("killed-run");
    // While the first process lives, a second one reads and writes the same store.
    const second = await openStore({ stateDir, settings: decodeSettings({}).store });
    try {
      expect(await second.store.getRun("killed-run")).toMatchObject({ status: "running" });
      expect(await second.store.createRun({ ...run, runId: "second-run" })).toBe(true);
    } finally {
      await second.close();
    }
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGKILL");
    await exited;

    const reopened = await openStore({ stateDir, settings: decodeSettings({}).store });
    try {
      const found = await reopened.store.getRun("killed-run");
      expect(found).toMatchObject({ status: "running", snapshot: { node: "build" } });
      expect(await reopened.store.listEvidence("killed-run")).toEqual([
        { runId: "killed-run", seq: 1, at: 1_001, entry: { ran: "npm test" } },
      ]);
      expect((await reopened.store.getReceipts("killed-run", [1])).get(1)?.result).toEqual({
        exitCode: 0,
      });
      expect((await reopened.store.listActiveRuns()).map((r) => r.runId).sort()).toEqual(
        ["killed-run", "second-run"].sort(),
      );
    } finally {
      await reopened.close();
    }
  });

  it("uses the endpoint and table named in the environment", async () => {
    const server = await startEmbeddedDynamo();
    const client = testClient(server.endpoint);
    const env = {
      CLUSTERCODE_DYNAMODB_ENDPOINT: server.endpoint,
      CLUSTERCODE_DYNAMODB_TABLE: "team_runs",
      AWS_ACCESS_KEY_ID: "key",
      AWS_SECRET_ACCESS_KEY: "secret",
    };
    try {
      const opened = await openStore({ settings: decodeSettings(env).store });
      expect(opened.store.table).toBe("team_runs");
      await opened.store.createRun(run);
      await opened.close();
      // The run is in that table on that server, and opening again reuses the table.
      const direct = new DynamoStore({ client, table: "team_runs" });
      expect(await direct.getRun("local-1")).toEqual(run);
      const again = await openStore({ settings: decodeSettings(env).store });
      expect(await again.store.getRun("local-1")).toEqual(run);
      await again.close();
    } finally {
      client.destroy();
      await server.close();
    }
  });
});
