import { describe, expect, it } from "vitest";
import { withoutCredentials } from "../../../src/devbox/local/repository-url.js";

describe("repository credentials of local DevBoxes", () => {
  it("strips only the user and password of http(s) URLs", () => {
    expect(withoutCredentials("https://x-access-token:ghs_abc@github.com/acme/app.git")).toBe(
      "https://github.com/acme/app.git",
    );
    expect(withoutCredentials("/srv/repos/app")).toBe("/srv/repos/app");
    expect(withoutCredentials("https://github.com/acme/app.git")).toBe(
      "https://github.com/acme/app.git",
    );
  });
});
