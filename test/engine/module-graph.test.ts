import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { NODE_KINDS } from "../../src/engine/nodes/node-kinds.js";

const ENGINE = resolve(dirname(fileURLToPath(import.meta.url)), "../../src/engine");

/** Every module under src/engine, by its path relative to it. */
function engineModules(dir = ENGINE): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return engineModules(path);
    return entry.name.endsWith(".ts") ? [relative(ENGINE, path)] : [];
  });
}

/** The engine modules `module` imports, type-only imports and re-exports included. */
function importsOf(module: string): string[] {
  const text = readFileSync(join(ENGINE, module), "utf8");
  const specifiers = [...text.matchAll(/^(?:import|export)\b[^;]*?from "(\.[^"]+)"/gms)];
  return specifiers
    .map((match) => relative(ENGINE, resolve(ENGINE, dirname(module), match[1]!)))
    .map((path) => path.replace(/\.js$/, ".ts"))
    .filter((path) => !path.startsWith(".."));
}

/** An import cycle among `modules`, as the path around it, if there is one. */
function findCycle(modules: string[]): string[] | undefined {
  const state = new Map<string, "open" | "done">();
  const visit = (module: string, path: string[]): string[] | undefined => {
    if (state.get(module) === "open") return [...path.slice(path.indexOf(module)), module];
    if (state.get(module) === "done") return undefined;
    state.set(module, "open");
    for (const next of importsOf(module)) {
      const cycle = visit(next, [...path, module]);
      if (cycle !== undefined) return cycle;
    }
    state.set(module, "done");
    return undefined;
  };
  for (const module of modules) {
    const cycle = visit(module, []);
    if (cycle !== undefined) return cycle;
  }
  return undefined;
}

describe("the engine's modules", () => {
  it("import each other without a cycle, counting type-only imports", () => {
    const modules = engineModules();
    expect(modules).toContain("nodes/node-kinds.ts");
    expect(importsOf("nodes/node-behaviour.ts")).toContain("transition.ts");
    expect(findCycle(modules)).toBeUndefined();
  });

  it("give every node kind a module of its own behind the node table", () => {
    expect(Object.keys(NODE_KINDS).sort()).toEqual([
      "approval",
      "decision",
      "loop",
      "prototype",
      "run",
    ]);
    for (const kind of Object.keys(NODE_KINDS)) {
      expect(importsOf("nodes/node-kinds.ts")).toContain(`nodes/${kind}.ts`);
      expect(importsOf(`nodes/${kind}.ts`)).not.toContain("nodes/node-kinds.ts");
    }
  });
});
