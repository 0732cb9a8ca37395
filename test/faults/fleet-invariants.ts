import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { RunRepository } from "../../src/store/run-repository.js";
import type { Store, StoredRun } from "../../src/store/store.js";
import type { Incarnation } from "./replica-fleet.js";

/** Where a command of the fleet's workflow notes that it started (`<node> <epoch ms>` lines, never committed). */
export const STARTS_FILE = ".git/command-starts";

/** One start of a command, as a DevBox's file says, on replica `replica`. */
interface CommandStart {
  devbox: string;
  node: string;
  at: number;
  replica: number;
}

/** What the multi-replica checks read besides the store. */
export interface FleetEvidence {
  /** Each replica's state directory, by index. */
  stateDirs: string[];
  /** Each replica's lives, by index. */
  lives: (readonly Incarnation[])[];
  /** Nodes whose command must never run twice in a run (`idempotent: false`). */
  nonIdempotent: string[];
}

/** Replica `replica` was killed between `from` and `to`. */
function killedBetween(lives: readonly Incarnation[], from: number, to: number): boolean {
  return lives.some(({ killedAt }) => killedAt !== undefined && killedAt >= from && killedAt <= to);
}

/** Every command start every DevBox of every replica noted. */
function commandStarts(stateDirs: string[]): CommandStart[] {
  const starts: CommandStart[] = [];
  stateDirs.forEach((stateDir, replica) => {
    const devboxes = join(stateDir, "devboxes");
    if (!existsSync(devboxes)) return;
    for (const devbox of readdirSync(devboxes)) {
      const file = join(devboxes, devbox, "checkout", STARTS_FILE);
      if (!existsSync(file)) continue;
      for (const line of readFileSync(file, "utf8").split("\n")) {
        const [node, at] = line.trim().split(" ");
        if (node !== undefined && at !== undefined) {
          starts.push({ devbox, node, at: Number(at), replica });
        }
      }
    }
  });
  return starts.sort((a, b) => a.at - b.at);
}

/**
 * One claim, one DevBox; no non-idempotent command twice. A command started again in the same
 * DevBox (a claim performed twice) is a problem unless the replica that started it first was
 * killed in between (the DevBox died with it); a non-idempotent node's command started twice
 * in a run, in any DevBoxes, is one in any case.
 */
export function startProblems(evidence: FleetEvidence): string[] {
  const problems: string[] = [];
  const starts = commandStarts(evidence.stateDirs);
  const seen = new Map<string, CommandStart>();
  const shipped = new Map<string, number>();
  for (const start of starts) {
    const key = `${start.devbox} ${start.node}`;
    const before = seen.get(key);
    if (
      before !== undefined &&
      !killedBetween(evidence.lives[before.replica]!, before.at, start.at)
    )
      problems.push(
        `DevBox ${start.devbox} started ${start.node} on replica ${before.replica} and again on replica ${start.replica} while the first lived`,
      );
    seen.set(key, start);
    if (evidence.nonIdempotent.includes(start.node)) {
      const run = `${start.devbox.slice(0, start.devbox.lastIndexOf("-"))} ${start.node}`;
      shipped.set(run, (shipped.get(run) ?? 0) + 1);
    }
  }
  for (const [run, count] of shipped)
    if (count > 1) problems.push(`run ${run}: a non-idempotent command started ${count} times`);
  return problems;
}

interface LossEntry {
  kind: string;
  at: number;
  devbox?: string;
}

/**
 * No DevBox declared lost while its replica lives: a loss is right only when a replica that
 * ran the DevBox (any, when none did yet) was killed between the claim and the loss.
 */
export async function lossProblems(
  store: Store,
  runIds: string[],
  evidence: FleetEvidence,
): Promise<string[]> {
  const problems: string[] = [];
  for (const runId of runIds) {
    const entries = (await store.listEvidence(runId)).map((r) => r.entry as LossEntry);
    for (const loss of entries) {
      if (!["devbox.lost", "attempt.lost"].includes(loss.kind) || loss.devbox === undefined)
        continue;
      const claimed = entries.find((e) => e.kind === "devbox.claimed" && e.devbox === loss.devbox);
      const from = claimed?.at ?? 0;
      const id = `${runId}-${loss.devbox}`;
      const owners = evidence.stateDirs.flatMap((dir, replica) =>
        existsSync(join(dir, "devboxes", id)) ? [replica] : [],
      );
      const candidates = owners.length > 0 ? owners : evidence.lives.map((_, replica) => replica);
      if (!candidates.some((r) => killedBetween(evidence.lives[r]!, from, loss.at)))
        problems.push(`DevBox ${id} declared lost while replica ${owners.join("/")} lived`);
    }
  }
  return problems;
}

/**
 * One run per trigger (each issue labelled once has one run), every acknowledged `/approve`
 * applied once, and every run ended or waiting on an explicit lost outcome.
 */
export async function runProblems(
  store: Store,
  runs: StoredRun[],
  issues: number[],
): Promise<string[]> {
  const problems: string[] = [];
  for (const issue of issues) {
    const of = runs.filter((run) => run.issue === issue);
    if (of.length !== 1) problems.push(`issue ${issue} has ${of.length} runs`);
  }
  const repository = new RunRepository(store);
  for (const run of runs) {
    const loaded = await repository.get(run.runId);
    if (loaded === undefined) continue;
    const { state } = loaded.document;
    const kinds = (await repository.evidence(run.runId)).map((r) => r.entry.kind);
    const answered = kinds.filter((kind) => kind === "approval.answered").length;
    if (answered > 1) problems.push(`run ${run.runId} applied an approval ${answered} times`);
    if (state.status === "awaiting_input" && state.awaiting?.kind !== "lost")
      problems.push(
        `run ${run.runId} still waits on ${state.awaiting?.kind ?? "?"} after /approve`,
      );
    else if (!["awaiting_input", "succeeded"].includes(state.status))
      problems.push(
        `run ${run.runId} ended ${state.status}: ${JSON.stringify(state.visits.at(-1))}`,
      );
  }
  return problems;
}
