import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** A commit a push brought to a branch of the remote. */
export interface PushedCommit {
  branch: string;
  sha: string;
  subject: string;
}

const LOG = "pushes.log";

/**
 * Has bare repository `remote` log every commit each push brings to a branch (a post-receive
 * hook, so it sees pushes over any transport: a path, `git http-backend`). A push that moves
 * no branch (everything up to date) brings nothing.
 */
export function recordPushes(remote: string): void {
  const hook = join(remote, "hooks", "post-receive");
  writeFileSync(
    hook,
    `#!/bin/sh
zero=0000000000000000000000000000000000000000
while read old new ref; do
  case "$ref" in refs/heads/*) ;; *) continue ;; esac
  [ "$new" = "$zero" ] && continue
  if [ "$old" = "$zero" ]; then
    set -- "$new" --not $(git for-each-ref --format='%(refname)' refs/heads | grep -vx "$ref")
  else
    set -- "$old..$new"
  fi
  git log --format="\${ref#refs/heads/}%x09%H%x09%s" "$@" >> ${LOG}
done
`,
  );
  chmodSync(hook, 0o755);
  execFileSync("git", ["config", "core.hooksPath", join(remote, "hooks")], { cwd: remote });
}

/** The commits pushes brought to `remote` (see {@link recordPushes}), oldest push first. */
export function pushedCommits(remote: string): PushedCommit[] {
  const log = join(remote, LOG);
  if (!existsSync(log)) return [];
  return readFileSync(log, "utf8")
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => {
      const [branch = "", sha = "", ...subject] = line.split("\t");
      return { branch, sha, subject: subject.join("\t") };
    });
}
