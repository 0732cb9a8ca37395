/**
 * The integration project's global setup: tests there run `dist/` (the CLI, DevBox agents, the
 * app as a process), so a `dist/` older than `src/` would test yesterday's code silently. When
 * any source file is newer than its build output (or has none), this builds once, before any
 * test file starts; `npm test` has just built, so there it only checks.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { join, relative } from "node:path";

const ROOT = new URL("../../", import.meta.url).pathname;

/** The first source file whose build output is missing or older, or undefined when fresh. */
export function staleSource(root = ROOT): string | undefined {
  const src = join(root, "src");
  for (const entry of readdirSync(src, { recursive: true, encoding: "utf8" })) {
    if (!entry.endsWith(".ts") || entry.endsWith(".d.ts")) continue;
    const source = join(src, entry);
    const built = join(root, "dist", entry.replace(/\.ts$/, ".js"));
    if (!existsSync(built) || statSync(built).mtimeMs < statSync(source).mtimeMs) {
      return relative(root, source);
    }
  }
  return undefined;
}

export default function setup(): void {
  const stale = staleSource();
  if (stale === undefined) return;
  process.stderr.write(`dist/ is older than ${stale}: building (tsc -p tsconfig.build.json)\n`);
  const tsc = join(ROOT, "node_modules", "typescript", "bin", "tsc");
  execFileSync(process.execPath, [tsc, "-p", "tsconfig.build.json"], {
    cwd: ROOT,
    stdio: "inherit",
  });
  const still = staleSource();
  if (still !== undefined) throw new Error(`dist/ is still older than ${still} after building`);
}
