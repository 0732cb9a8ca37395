import { randomUUID } from "node:crypto";
import { link, readFile, rm, writeFile } from "node:fs/promises";
import { isAlive } from "./process-info.js";

/**
 * Takes `file` for this process: creates it holding this process's pid, or finds it holding
 * that pid already. A file of a process that died (a crash, a SIGKILL) is taken over at once:
 * the kernel says when its owner is gone, so there is nothing to wait out. False while another
 * live process holds it.
 *
 * The file appears whole (written aside, then linked into place, which fails when it exists):
 * it never holds a partly written pid for another process to misread.
 */
export async function takePidFile(file: string): Promise<boolean> {
  // Twice at most: once more after clearing the file of an owner that died.
  for (let attempt = 0; attempt < 2; attempt++) {
    if (await createPidFile(file)) return true;
    const owner = await pidFileOwner(file);
    if (owner === process.pid) return true;
    if (owner !== undefined && (await isAlive(owner))) return false;
    await rm(file, { recursive: true, force: true });
  }
  return false;
}

/** The pid `file` holds; undefined when there is none (no file, or not a pid file). */
export async function pidFileOwner(file: string): Promise<number | undefined> {
  const text = await readFile(file, "utf8").catch(() => "");
  const pid = Number(text.trim());
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}

/** Removes `file` when this process holds it. */
export async function releasePidFile(file: string): Promise<void> {
  if ((await pidFileOwner(file)) === process.pid) await rm(file, { force: true });
}

async function createPidFile(file: string): Promise<boolean> {
  const aside = `${file}.${randomUUID()}`;
  await writeFile(aside, `${process.pid}\n`, { mode: 0o600 });
  try {
    await link(aside, file);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    return false;
  } finally {
    await rm(aside, { force: true });
  }
}
