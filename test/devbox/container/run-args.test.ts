/**
 * The argv a container DevBox starts with carries the ECS task's walls. CI has no image
 * registry to pull the DevBox image from, so the container itself is not run here: this checks
 * the argv, and test/devbox/local/container-executor.test.ts the executor that builds it.
 */
import { describe, expect, it } from "vitest";
import { containerRunArgs, type ContainerRun } from "../../../src/devbox/container/run-args.js";

const base: ContainerRun = {
  engine: { kind: "podman", binary: "/usr/bin/podman", rootless: false },
  name: "clustercode-run1-build",
  devboxId: "run1-build",
  image: "clustercode-devbox",
  uid: 201234,
  devboxDir: "/state/devboxes/run1-build",
  checkout: "/state/devboxes/run1-build/checkout",
  envNames: ["CLUSTERCODE_RUN_ID", "ANTHROPIC_API_KEY"],
  envValues: { HOME: "/state/devboxes/run1-build/home" },
  command: ["clustercode", "devbox", "--api", "http://127.0.0.1:4000", "--devbox", "run1-build"],
};

/** The value after each occurrence of `flag`. */
function valuesOf(args: string[], flag: string): string[] {
  return args.flatMap((arg, at) => (arg === flag ? [args[at + 1] ?? ""] : []));
}

describe("containerRunArgs", () => {
  it("runs the image as the DevBox's own user with every wall of an ECS task", () => {
    const args = containerRunArgs(base);
    expect(args[0]).toBe("run");
    expect(valuesOf(args, "--user")).toEqual(["201234:201234"]);
    expect(args).toContain("--read-only");
    expect(valuesOf(args, "--cap-drop")).toEqual(["ALL"]);
    expect(valuesOf(args, "--security-opt")).toEqual(["no-new-privileges"]);
    expect(valuesOf(args, "--network")).toEqual(["none"]);
    expect(Number(valuesOf(args, "--pids-limit")[0])).toBeGreaterThan(0);
    // The ECS executor's defaults when the workflow names none.
    expect(valuesOf(args, "--memory")).toEqual(["2048m"]);
    expect(valuesOf(args, "--cpus")).toEqual(["1"]);
    expect(args).not.toContain("--privileged");
    // The agent runs instead of the image's entrypoint (which would clone over the network).
    const image = args.indexOf("clustercode-devbox");
    expect(valuesOf(args, "--entrypoint")).toEqual(["clustercode"]);
    expect(args.slice(image + 1)).toEqual(base.command.slice(1));
    expect(valuesOf(args, "--workdir")).toEqual([base.checkout]);
  });

  it("takes the workflow's devbox cpu and memory", () => {
    const args = containerRunArgs({ ...base, cpus: 2.5, memoryMiB: 4096 });
    expect(valuesOf(args, "--memory")).toEqual(["4096m"]);
    expect(valuesOf(args, "--cpus")).toEqual(["2.5"]);
  });

  it("passes variables by name only: no value of the agent's environment is in argv", () => {
    const args = containerRunArgs(base);
    expect(valuesOf(args, "--env")).toEqual([
      "CLUSTERCODE_RUN_ID",
      "ANTHROPIC_API_KEY",
      "HOME=/state/devboxes/run1-build/home",
    ]);
  });

  it("binds only the DevBox's directory writable, the mirror and the base cache read-only", () => {
    const args = containerRunArgs({
      ...base,
      mirror: "/state/mirrors/abc.git",
      setupCache: { writable: "/state/cache/run", readOnly: ["/state/cache/main"] },
    });
    expect(valuesOf(args, "--mount")).toEqual([
      "type=bind,src=/state/mirrors/abc.git,dst=/state/mirrors/abc.git,readonly",
      "type=bind,src=/state/cache/main,dst=/state/cache/main,readonly",
      "type=bind,src=/state/cache/run,dst=/state/cache/run",
      "type=bind,src=/state/devboxes/run1-build,dst=/state/devboxes/run1-build",
    ]);
    expect(args).not.toContain("-v");
    expect(args).not.toContain("--volume");
  });

  it("keeps the user's uid in rootless podman, where it would be root otherwise", () => {
    expect(valuesOf(containerRunArgs(base), "--userns")).toEqual([]);
    const rootless = { ...base, engine: { ...base.engine, rootless: true } };
    expect(valuesOf(containerRunArgs(rootless), "--userns")).toEqual(["keep-id"]);
  });

  it("refuses a path that would end the mount option early", () => {
    expect(() => containerRunArgs({ ...base, devboxDir: "/state,dst=/etc" })).toThrow(
      /cannot mount/,
    );
  });
});
