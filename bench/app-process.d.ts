// Types of bench/app-process.js, for the tests that start the app as the benchmarks do.
import type { ChildProcess } from "node:child_process";

/** The webhook secret the app verifies deliveries with. */
export const WEBHOOK_SECRET: string;
/** The app's environment: its state in `stateDir`, GitHub at `githubHost`, more in `extra`. */
export function appEnv(
  stateDir: string,
  githubHost: string,
  extra?: Record<string, string>,
): Record<string, string | undefined>;
export function sleep(ms: number): Promise<void>;
export const GATE_WORKFLOW: string;
/** Starts the app; resolves once its health check answers, with the ms that took. */
export function startApp(
  env: Record<string, string | undefined>,
): Promise<{ child: ChildProcess; healthMs: number; started: number }>;
/** Stops the app as the container runtime does (SIGTERM) and waits for it to exit. */
export function stopApp(child: ChildProcess): Promise<void>;
export function rssMiB(pid: number): number;
export function waitForIdle(pid: number): Promise<number>;
