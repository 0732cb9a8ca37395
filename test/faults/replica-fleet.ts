import type { ChildProcess } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { startApp, stopApp } from "../../bench/app-process.js";
import type { Store } from "../../src/store/store.js";
import { openStore, startEmbeddedDynamo, type EmbeddedDynamo } from "../../src/store/embedded.js";
import { freePort, portTaken } from "../helpers/free-port.js";
import type { Delivery } from "./app-runs.js";
import { LoopbackApp, sendSigned } from "./loopback-app.js";

/** One app process's life: started, and SIGKILLed (with its DevBoxes) unless still running. */
export interface Incarnation {
  startedAt: number;
  killedAt?: number;
}

/** One replica: its own port and state directory (its DevBoxes' files), the store shared. */
interface Member {
  env: Record<string, string | undefined>;
  child?: ChildProcess;
  lives: Incarnation[];
}

/**
 * Several app processes (`node dist/github/main.js`) over one DynamoDB endpoint (dynalite in
 * this process) and one loopback GitHub (see {@link LoopbackApp}), as an operator runs them
 * behind a load balancer. A replica is killed as its container dies: SIGKILL to it and to the
 * process groups of everything it started (its DevBoxes), and started again on its state
 * directory under a new identity.
 */
export class ReplicaFleet {
  private constructor(
    readonly app: LoopbackApp,
    private readonly dynamo: EmbeddedDynamo,
    private readonly members: Member[],
  ) {}

  /** `count` replicas of an app serving `workflow`, not started yet; `env` adds to theirs. */
  static async create(
    workflow: string,
    count: number,
    env: Record<string, string> = {},
  ): Promise<ReplicaFleet> {
    const app = await LoopbackApp.create(workflow);
    const dynamo = await startEmbeddedDynamo();
    const members: Member[] = [];
    for (let i = 0; i < count; i++) {
      const stateDir = join(app.dir, `replica-${i}`);
      mkdirSync(stateDir);
      const own = { ...app.env };
      // The intake's and the DevBox leases' own defaults: what an operator gets.
      delete own.CLUSTERCODE_DELIVERY_SWEEP_MS;
      delete own.CLUSTERCODE_DEVBOX_LEASE_MS;
      members.push({
        env: {
          ...own,
          ...env,
          PORT: String(await freePort()),
          CLUSTERCODE_STATE_DIR: stateDir,
          CLUSTERCODE_DYNAMODB_ENDPOINT: dynamo.endpoint,
          AWS_ACCESS_KEY_ID: "fleet",
          AWS_SECRET_ACCESS_KEY: "fleet",
          AWS_REGION: "us-east-1",
        },
        lives: [],
      });
    }
    return new ReplicaFleet(app, dynamo, members);
  }

  get size(): number {
    return this.members.length;
  }

  /** Replica `i`'s state directory (its DevBoxes live under `devboxes/`). */
  stateDir(i: number): string {
    return this.member(i).env.CLUSTERCODE_STATE_DIR!;
  }

  /** Each replica's lives so far. */
  lives(i: number): readonly Incarnation[] {
    return this.member(i).lives;
  }

  alive(i: number): boolean {
    const child = this.member(i).child;
    return child !== undefined && child.exitCode === null && child.signalCode === null;
  }

  /**
   * Starts replica `i` (once its health check answers). Its port was free when chosen; another
   * test's process may have bound it since (the app then exits at start): it moves to a new
   * one, as a replica behind a load balancer would, and any other exit fails the start.
   */
  async start(i: number): Promise<void> {
    const member = this.member(i);
    for (let tries = 1; ; tries++) {
      try {
        member.child = (await startApp(member.env)).child;
        break;
      } catch (error) {
        if (tries === 3 || !(await portTaken(Number(member.env.PORT)))) throw error;
        member.env.PORT = String(await freePort());
      }
    }
    member.lives.push({ startedAt: Date.now() });
  }

  /** SIGKILLs replica `i` and its DevBoxes, as a container dies, and waits until it is gone. */
  async kill(i: number): Promise<void> {
    const member = this.member(i);
    const child = member.child;
    if (child?.pid === undefined || !this.alive(i)) return;
    const exited = new Promise((resolve) => child.once("exit", resolve));
    killTree(child.pid);
    await exited;
    member.lives.at(-1)!.killedAt = Date.now();
  }

  /** Sends a delivery to replica `i`; true when it acknowledged it. */
  send(i: number, delivery: Delivery): Promise<boolean> {
    return sendSigned(Number(this.member(i).env.PORT), delivery);
  }

  /** The shared store, opened from this process. */
  async openStore(): Promise<{ store: Store; close: () => Promise<void> }> {
    const opened = await openStore({ env: this.member(0).env });
    return { store: opened.store, close: () => opened.close() };
  }

  /** Processes (not the replicas themselves) whose command line names a replica's directory. */
  leftoverProcesses(): string[] {
    return processes()
      .filter((p) => this.members.some(({ env }) => p.cmdline.includes(env.CLUSTERCODE_STATE_DIR!)))
      .map((p) => `${p.pid} ${p.cmdline.slice(0, 200)}`);
  }

  /** Stops every replica (SIGTERM: they stop their DevBoxes) and removes everything. */
  async close(): Promise<void> {
    await Promise.all(
      this.members.flatMap(({ child }) => (child === undefined ? [] : [stopApp(child)])),
    );
    await this.dynamo.close();
    await this.app.close();
  }

  private member(i: number): Member {
    const member = this.members[i];
    if (member === undefined) throw new Error(`no replica ${i}`);
    return member;
  }
}

/** A process as /proc shows it. */
interface ProcessEntry {
  pid: number;
  ppid: number;
  pgid: number;
  cmdline: string;
}

function processes(): ProcessEntry[] {
  const found: ProcessEntry[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      const cmdline = readFileSync(`/proc/${name}/cmdline`, "utf8").replaceAll("\0", " ");
      found.push({
        pid: Number(name),
        ppid: Number(fields[1]),
        pgid: Number(fields[2]),
        cmdline,
      });
    } catch {
      // Gone meanwhile.
    }
  }
  return found;
}

/** `root` and every process below it, read from /proc. */
function tree(root: number): ProcessEntry[] {
  const all = processes();
  const below = new Set([root]);
  for (let grew = true; grew;) {
    grew = false;
    for (const p of all) {
      if (!below.has(p.pid) && below.has(p.ppid)) {
        below.add(p.pid);
        grew = true;
      }
    }
  }
  return all.filter((p) => below.has(p.pid));
}

/**
 * SIGKILLs `root` and everything it started, each process and its group (a DevBox agent is the
 * leader of its own): `root` is stopped first, so that it starts nothing meanwhile and its
 * children are still its own when they are listed.
 */
function killTree(root: number): void {
  const signal = (pid: number, sig: NodeJS.Signals) => {
    try {
      process.kill(pid, sig);
    } catch {
      // Gone already.
    }
  };
  signal(root, "SIGSTOP");
  const doomed = tree(root);
  // The replica shares this process's group: that group is not killed whole.
  const ours = processes().find((p) => p.pid === process.pid)?.pgid;
  for (const p of doomed) if (p.pid !== root) signal(p.pid, "SIGSTOP");
  for (const p of [...doomed, ...tree(root)]) {
    if (p.pid === root) continue;
    if (p.pgid !== ours && p.pgid > 1) signal(-p.pgid, "SIGKILL");
    signal(p.pid, "SIGKILL");
  }
  signal(root, "SIGKILL");
}
