import { gitText, runGit } from "./git-process.js";

/** What a ref update puts in the repository, as the hub's push policy reads it. */
export interface PushedMaterial {
  /**
   * The paths the update changes: those each new commit changes, and those where the new tip
   * differs from every tip the repository already trusts (the ref's own and the base branch's).
   */
  paths: string[];
  /**
   * Everything the secret scan reads: those paths (file and directory names), each new commit
   * whole (author, committer, message and every header, a `gpgsig` or `mergetag` too) and the
   * lines the new commits add.
   */
  text: string;
}

/** Where the scan reads: the staging repository and the environment that adds the quarantine. */
interface Repository {
  dir: string;
  env: Record<string, string>;
}

const DIFF = ["--no-renames", "--diff-merges=first-parent", "--no-color", "--no-ext-diff"];

/**
 * What moving `ref` to the commit `tip` puts in the repository. The commits scanned are all
 * those the ref moves to that neither the ref's current value nor the base branch (`baseBranch`,
 * else the repository's default) holds: a commit the repository already has on some other
 * branch is read like a new one, since moving the ref onto it is what publishes it here.
 */
export async function pushedMaterial(
  ref: string,
  tip: string,
  baseBranch: string | undefined,
  repository: Repository,
): Promise<PushedMaterial> {
  const git = (args: string[], input?: Buffer) =>
    gitText(args, { cwd: repository.dir, env: repository.env, ...(input && { input }) });
  const trusted = await trustedTips(
    [ref, ...(baseBranch === undefined ? [] : [`refs/heads/${baseBranch}`]), "HEAD"],
    repository,
  );
  const range = trusted.length === 0 ? [tip] : [tip, "--not", ...trusted];
  const commits = await git(["rev-list", ...range]);
  const [raw, names, diff, moved] = await Promise.all([
    git(["cat-file", "--batch"], Buffer.from(commits)),
    git(["log", ...DIFF, "--format=", "--name-only", "-z", ...range]),
    git(["log", ...DIFF, "--format=", "-p", "--text", "-U0", ...range]),
    changedFromAll(tip, trusted, repository),
  ]);
  const paths = [...new Set([...names.split("\0").filter(Boolean), ...moved])];
  // Only what is added counts: a push that removes a leaked secret must go through.
  const added = diff
    .split("\n")
    .filter((line) => line.startsWith("+") && !line.startsWith("+++ "))
    .join("\n");
  return { paths, text: [...paths, raw, added].join("\n") };
}

/** The commits `names` resolve to in the repository, without duplicates; missing ones left out. */
async function trustedTips(names: string[], repository: Repository): Promise<string[]> {
  const tips = await Promise.all(
    names.map(async (name) => {
      const resolved = await runGit(["rev-parse", "--verify", "--quiet", `${name}^{commit}`], {
        cwd: repository.dir,
        env: repository.env,
      });
      return resolved.exitCode === 0 ? resolved.stdout.toString("utf8").trim() : undefined;
    }),
  );
  return [...new Set(tips.filter((tip): tip is string => tip !== undefined && tip !== ""))];
}

/**
 * The paths whose content at `tip` differs from each of the `trusted` tips (every path of the tip
 * when none is trusted): what the ref's move changes in its files, wherever its commits came from.
 */
async function changedFromAll(
  tip: string,
  trusted: readonly string[],
  repository: Repository,
): Promise<string[]> {
  const options = { cwd: repository.dir, env: repository.env };
  if (trusted.length === 0) {
    const all = await gitText(["ls-tree", "-r", "--name-only", "-z", tip], options);
    return all.split("\0").filter(Boolean);
  }
  const changed = await Promise.all(
    trusted.map(async (base) => {
      const names = await gitText(
        ["diff", "--no-renames", "--name-only", "-z", base, tip],
        options,
      );
      return new Set(names.split("\0").filter(Boolean));
    }),
  );
  const [first = new Set<string>(), ...rest] = changed;
  return [...first].filter((path) => rest.every((set) => set.has(path)));
}
