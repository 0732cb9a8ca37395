/**
 * What a sandbox shows of an agent CLI installed on the host, worked out from real files in a
 * temporary directory: the links on the way recreated, the package bound, the interpreter's
 * install bound, and never a home directory or anything above one.
 */
import { mkdirSync, mkdtempSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cliMounts, installOf, tooBroad } from "../../../src/devbox/local/cli-mounts.js";

const root = realpathSync(mkdtempSync(join(tmpdir(), "clustercode-cli-mounts-")));
afterAll(() => rm(root, { recursive: true, force: true }));

function file(path: string, text: string): void {
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(path, text, { mode: 0o755 });
}

describe("cliMounts", () => {
  it("follows a link through a linked lib directory, recreating the link the sandbox cannot see", () => {
    const prefix = join(root, "prefix");
    const real = join(root, "disk", "lib");
    file(join(real, "node_modules", "@acme", "agent", "bin", "agent.js"), "#!/bin/sh\n");
    file(join(real, "node_modules", "@acme", "agent", "package.json"), "{}");
    mkdirSync(join(prefix, "bin"), { recursive: true });
    symlinkSync(real, join(prefix, "lib"));
    symlinkSync("../lib/node_modules/@acme/agent/bin/agent.js", join(prefix, "bin", "agent"));
    const mounts = cliMounts(["agent"], join(prefix, "bin"), [join(prefix, "bin"), "/usr", "/bin"]);
    expect(mounts.readOnly).toEqual([join(real, "node_modules", "@acme", "agent")]);
    expect([...mounts.links]).toEqual([[join(prefix, "lib"), real]]);
  });

  it("shows the install of the interpreter a script's #! line finds on PATH, when outside", () => {
    const bin = join(root, "nvm", "bin");
    const build = join(root, "node-build");
    file(join(build, "bin", "node"), "binary");
    file(join(root, "nvm", "lib", "node_modules", "tool", "cli.js"), "#!/usr/bin/env node\n");
    mkdirSync(bin, { recursive: true });
    symlinkSync(join(build, "bin", "node"), join(bin, "node"));
    symlinkSync("../lib/node_modules/tool/cli.js", join(bin, "tool"));
    const mounts = cliMounts(["tool"], bin, [bin, "/usr", "/bin"]);
    expect(mounts.readOnly).toEqual([join(root, "nvm", "lib", "node_modules", "tool"), build]);
    expect([...mounts.links]).toEqual([]);
  });

  it("adds nothing for a CLI the sandbox already shows, nor for one that is missing", () => {
    const bin = join(root, "plain-bin");
    file(join(bin, "plain"), "#!/bin/sh\n");
    expect(cliMounts(["plain", "absent"], bin, [bin, "/usr", "/bin"])).toEqual({
      readOnly: [],
      links: new Map(),
    });
  });
});

describe("installOf", () => {
  it("is the npm package, the installer's version directory, else the file alone", () => {
    expect(installOf("/opt/p/lib/node_modules/@s/cli/node_modules/x/bin/x.js")).toBe(
      "/opt/p/lib/node_modules/@s/cli",
    );
    expect(installOf("/opt/p/lib/node_modules/cli/dist/main.js")).toBe(
      "/opt/p/lib/node_modules/cli",
    );
    expect(installOf("/home/alice/.local/share/claude/versions/2.1.0")).toBe(
      "/home/alice/.local/share/claude/versions/2.1.0",
    );
    expect(installOf("/opt/tool/versions/3.0/bin/tool")).toBe("/opt/tool/versions/3.0");
    expect(installOf("/home/alice/.nvm/versions/node/v22.1.0/bin/node")).toBe(
      "/home/alice/.nvm/versions/node/v22.1.0",
    );
    // A node right in a home directory's bin: the file, never the home directory.
    expect(installOf("/home/alice/bin/node")).toBe("/home/alice/bin/node");
  });
});

describe("tooBroad", () => {
  it("refuses /, top-level directories, home directories and what is above them", () => {
    for (const dir of ["/", "/home", "/root", "/opt", "/home/alice", "/home/alice/"]) {
      expect(tooBroad(dir), dir).toBe(true);
    }
    for (const dir of ["/opt/tool", "/home/alice/.local/share", "/root/.nvm"]) {
      expect(tooBroad(dir), dir).toBe(false);
    }
  });
});
