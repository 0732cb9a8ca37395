import { describe, expect, it } from "vitest";
import { cloneUrlOf } from "../../src/devbox/ecs/names.js";
import { gitHostBaseUrl, repositoryCloneUrl } from "../../src/devbox/git-host.js";

describe("where DevBoxes clone from", () => {
  it("is github.com over https unless GHE_HOST and GHE_PROTOCOL say otherwise", () => {
    expect(repositoryCloneUrl(gitHostBaseUrl({}), "acme/app", "ghs_t")).toBe(
      "https://x-access-token:ghs_t@github.com/acme/app.git",
    );
    const ghe = gitHostBaseUrl({ GHE_HOST: "127.0.0.1:8123", GHE_PROTOCOL: "http" });
    expect(repositoryCloneUrl(ghe, "acme/app", "ghs_t")).toBe(
      "http://x-access-token:ghs_t@127.0.0.1:8123/acme/app.git",
    );
    // ECS DevBoxes get the URL without a token: their entrypoint fetches one.
    expect(cloneUrlOf("acme/app", ghe)).toBe("http://127.0.0.1:8123/acme/app.git");
    expect(cloneUrlOf("acme/app")).toBe("https://github.com/acme/app.git");
    expect(cloneUrlOf("/srv/mirror.git", ghe)).toBe("/srv/mirror.git");
  });

  it("refuses a protocol or host that names no GitHub, saying which", () => {
    expect(() => gitHostBaseUrl({ GHE_PROTOCOL: "ftp" })).toThrow(
      'GHE_PROTOCOL must be http or https, got "ftp"',
    );
    expect(() => gitHostBaseUrl({ GHE_HOST: "ghe.example.com/api" })).toThrow(
      'GHE_HOST must be a host name with an optional :port, got "ghe.example.com/api"',
    );
  });
});
