import { createHash } from "node:crypto";
import { lstatSync } from "node:fs";
import { mkdir, readFile, realpath, rename, writeFile } from "node:fs/promises";
import { basename, dirname, isAbsolute, join, relative, sep } from "node:path";
import { discoverWorkflows } from "../workflow/find-workflows.js";
import { LAYOUT_FILE, positionsOf, withPositions } from "./layout-file.js";
import { emptyWorkflow } from "./workflow-draft.js";
import type { OpenedWorkflow, SaveRequest, SaveResult, WorkflowFiles } from "./workflow-files.js";

/** The version of a file that does not exist yet. */
const ABSENT = "absent";

/**
 * The workflows of a working tree (`clustercode ui`): saving writes the file, refused with 409
 * when its content hash is no longer the one the editor opened (someone else wrote it since).
 */
export class LocalWorkflowFiles implements WorkflowFiles {
  readonly saves = "file";

  /** `root`: the repository's directory, the one holding `.clustercode/`. */
  constructor(private readonly root: string) {}

  async list(): Promise<string[]> {
    const found = await discoverWorkflows(this.root);
    return found.map((path) => relative(this.root, join(this.root, path)));
  }

  async open(_repo: string | undefined, path: string): Promise<OpenedWorkflow> {
    const text = await this.#read(path);
    const layout = await this.#read(LAYOUT_FILE);
    const name = basename(path).replace(/\.ya?ml$/, "");
    return {
      path,
      yaml: text ?? emptyWorkflow(name === "workflow" ? "main" : name),
      version: versionOf(text),
      exists: text !== undefined,
      positions: positionsOf(layout, path),
    };
  }

  async save(request: SaveRequest): Promise<SaveResult> {
    const current = versionOf(await this.#read(request.path));
    if (current !== request.version) {
      return {
        ok: false,
        status: 409,
        message: `${request.path} changed on disk since the editor opened it: reload to see the change (your edits are still in the editor; copy them first).`,
      };
    }
    // A `.clustercode` or `.clustercode/workflows` that is a link (a repository can commit one)
    // would have the save write wherever it points: refused before anything is written.
    for (const path of [request.path, LAYOUT_FILE]) {
      const outside = await outsideOf(this.root, path);
      if (outside !== undefined) {
        const message = `${outside} leads outside the repository (a symbolic link): not saved.`;
        return { ok: false, status: 403, message };
      }
    }
    await this.#write(request.path, request.yaml);
    const layout = withPositions(await this.#read(LAYOUT_FILE), request.path, request.positions);
    await this.#write(LAYOUT_FILE, layout);
    return { ok: true, version: versionOf(request.yaml), message: `Saved ${request.path}.` };
  }

  async #read(path: string): Promise<string | undefined> {
    try {
      return await readFile(join(this.root, path), "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw error;
    }
  }

  /** Writes beside the file and renames over it: a reader never sees half a workflow. */
  async #write(path: string, text: string): Promise<void> {
    const target = join(this.root, path);
    await mkdir(dirname(target), { recursive: true });
    const temporary = `${target}.${process.pid}.tmp`;
    await writeFile(temporary, text, "utf8");
    await rename(temporary, target);
  }
}

/**
 * The first part of `path` (relative to `root`) that resolves outside `root` (a symbolic link,
 * or `..`), or undefined when every existing part stays inside.
 */
export async function outsideOf(root: string, path: string): Promise<string | undefined> {
  const top = await realpath(root);
  let at = root;
  for (const part of path.split(/[/\\]/).filter((piece) => piece !== "" && piece !== ".")) {
    at = join(at, part);
    const shown = relative(root, at);
    if (part === ".." || isAbsolute(shown) || shown.startsWith("..")) return path;
    const resolved = await realpath(at).catch((error: NodeJS.ErrnoException) => {
      // A part that does not exist yet is made by the save, inside what resolved so far.
      if (error.code === "ENOENT" && !isLink(at)) return undefined;
      return null;
    });
    if (resolved === undefined) return undefined;
    if (resolved === null || (resolved !== top && !resolved.startsWith(`${top}${sep}`)))
      return shown;
  }
  return undefined;
}

/** Whether `path` is a symbolic link (one to nowhere does not resolve, and is refused). */
function isLink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

/** The content hash the editor gets on open and sends back on save. */
export function versionOf(text: string | undefined): string {
  if (text === undefined) return ABSENT;
  return createHash("sha256").update(text, "utf8").digest("hex");
}
