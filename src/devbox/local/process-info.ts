import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { readFile, readlink } from "node:fs/promises";
import { promisify } from "node:util";

const run = promisify(execFile);

/** Whether process `pid` exists and has not exited (a zombie counts as exited). */
export async function isAlive(pid: number): Promise<boolean> {
  try {
    process.kill(pid, 0);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ESRCH") return false;
    if (code === "EPERM") return true;
    throw error;
  }
  const stat = await readProc(pid, "stat");
  // Gone between the two looks (a zombie reaped meanwhile): not alive. Where there is no /proc,
  // the signal's answer stands.
  if (stat === undefined) return !existsSync("/proc/self/stat");
  // The state follows the parenthesised command name: "pid (comm) S ...".
  return stat.slice(stat.lastIndexOf(")") + 2).charAt(0) !== "Z";
}

/** The arguments process `pid` was started with, or undefined when it is gone or unreadable. */
export async function commandLineOf(pid: number): Promise<string[] | undefined> {
  const cmdline = await readProc(pid, "cmdline");
  if (cmdline !== undefined) return cmdline.split("\0").filter((arg) => arg !== "");
  if (process.platform === "linux") return undefined;
  try {
    const { stdout } = await run("ps", ["-o", "args=", "-p", String(pid)]);
    const args = stdout.trim().split(/\s+/);
    return args.length > 0 && args[0] !== "" ? args : undefined;
  } catch (error) {
    // ps exits 1 when there is no such process.
    if ((error as { code?: unknown }).code === 1) return undefined;
    throw error;
  }
}

/** The working directory of process `pid` where the platform tells it (Linux), else undefined. */
export async function workingDirectoryOf(pid: number): Promise<string | undefined> {
  try {
    return await readlink(`/proc/${pid}/cwd`);
  } catch (error) {
    if (isGone(error)) return undefined;
    throw error;
  }
}

/** Waits until `pid` has exited or `timeoutMs` passed; true when it exited. */
export async function waitForExit(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (!(await isAlive(pid))) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

async function readProc(pid: number, file: string): Promise<string | undefined> {
  try {
    return await readFile(`/proc/${pid}/${file}`, "utf8");
  } catch (error) {
    if (isGone(error)) return undefined;
    throw error;
  }
}

function isGone(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return code === "ENOENT" || code === "ESRCH" || code === "EACCES" || code === "ENOTDIR";
}
