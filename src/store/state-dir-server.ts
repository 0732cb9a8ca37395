import { spawn } from "node:child_process";
import { closeSync, openSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { connect, type Socket } from "node:net";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { StoreError } from "./store-error.js";
import { inheritedEnvironment } from "../settings/process-environment.js";

const require = createRequire(import.meta.url);

/** What the store server of a state directory says about itself in `<stateDir>/store.json`. */
interface ServerNote {
  pid: number;
  /** Its DynamoDB endpoint on 127.0.0.1. */
  endpoint: string;
  /** Where processes attach on 127.0.0.1: the server lives while one stays connected. */
  attachPort: number;
}

/** A state directory's store, shared: the endpoint, and how to let go of it. */
export interface AttachedStore {
  endpoint: string;
  /** Lets go; the server stops a moment after the last process let go. */
  detach(): void;
}

/** How often, and how many times, a process looks for the server it may have started. */
const LOOK_MS = 100;
const LOOKS = 600;
/** How many looks before starting another server when none answered (it may have lost a race). */
const RESTART_EVERY = 30;

/**
 * Attaches to the store of `stateDir`, shared by every clustercode process using the directory:
 * one small server process holds its database (LevelDB allows one) and serves it on 127.0.0.1;
 * the first process to need it starts it, the others attach, and it stops once the last one
 * has gone (a process that dies, even by SIGKILL, lets go: its connection closes). Every
 * process reads and writes through DynamoDB's API, under the conditional writes the engine
 * already relies on between the app's replicas.
 */
export async function attachStateDir(stateDir: string): Promise<AttachedStore> {
  for (let look = 0; look < LOOKS; look++) {
    const note = readNote(stateDir);
    const socket = note === undefined ? undefined : await attach(note.attachPort);
    if (note !== undefined && socket !== undefined) {
      return { endpoint: note.endpoint, detach: () => socket.destroy() };
    }
    if (look % RESTART_EVERY === 0) startServer(stateDir);
    await sleep(LOOK_MS);
  }
  throw new StoreError(
    "unknown",
    `The store of the state directory ${stateDir} did not start (see ${join(stateDir, "store.log")})`,
  );
}

function readNote(stateDir: string): ServerNote | undefined {
  try {
    const note = JSON.parse(readFileSync(join(stateDir, "store.json"), "utf8")) as ServerNote;
    process.kill(note.pid, 0);
    return note;
  } catch {
    // Missing, or left by a server that died: none answers.
    return undefined;
  }
}

function attach(port: number): Promise<Socket | undefined> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: "127.0.0.1" });
    socket.once("connect", () => {
      socket.removeAllListeners("error");
      // Errors after this are the server going away; requests then fail on their own.
      socket.on("error", () => {});
      socket.unref();
      resolve(socket);
    });
    socket.once("error", () => resolve(undefined));
  });
}

function startServer(stateDir: string): void {
  const log = openSync(join(stateDir, "store.log"), "a", 0o600);
  try {
    const child = spawn(
      process.execPath,
      [
        "-e",
        SERVER,
        stateDir,
        require.resolve("dynalite"),
        require.resolve("classic-level"),
        String(IDLE_MS),
      ],
      {
        detached: true,
        stdio: ["ignore", log, log],
        env: { PATH: inheritedEnvironment().PATH ?? "" },
      },
    );
    child.unref();
  } finally {
    closeSync(log);
  }
}

/** How long the server waits, with nobody attached, before it stops. */
const IDLE_MS = 1500;

/**
 * The server, CommonJS run with `node -e` so it is the same from `src/` under the tests and from
 * `dist/`. It holds `<stateDir>/store-lock` (a LevelDB lock: a kernel file lock, gone with the
 * process) so only one server serves a directory; a second one exits at once.
 */
const SERVER = `
const { createServer } = require("node:net");
const { renameSync, rmSync, writeFileSync } = require("node:fs");
const { join } = require("node:path");
const [dir, dynalitePath, levelPath, idle] = process.argv.slice(1);
const { ClassicLevel } = require(levelPath);
const lock = new ClassicLevel(join(dir, "store-lock"));
lock.open().then(serve, (error) => {
  if (error.cause && error.cause.code === "LEVEL_LOCKED") process.exit(0);
  throw error;
});
function serve() {
  const dynamo = require(dynalitePath)({
    path: join(dir, "dynamodb"), createTableMs: 0, deleteTableMs: 0, updateTableMs: 0,
  });
  let attached = 0;
  let timer = setTimeout(stop, Number(idle) * 20);
  const server = createServer((socket) => {
    attached++;
    clearTimeout(timer);
    socket.on("error", () => {});
    socket.on("close", () => {
      if (--attached === 0) timer = setTimeout(stop, Number(idle));
    });
  });
  function stop() {
    server.close();
    rmSync(join(dir, "store.json"), { force: true });
    dynamo.close(() => lock.close().then(() => process.exit(0)));
    dynamo.closeAllConnections();
  }
  dynamo.listen(0, "127.0.0.1", () => server.listen(0, "127.0.0.1", () => {
    const note = JSON.stringify({
      pid: process.pid,
      endpoint: "http://127.0.0.1:" + dynamo.address().port,
      attachPort: server.address().port,
    });
    writeFileSync(join(dir, "store.json.tmp"), note + "\\n", { mode: 0o600 });
    renameSync(join(dir, "store.json.tmp"), join(dir, "store.json"));
  }));
}
`;
