import { describe, expect, it } from "vitest";
import { checkRequest } from "./helpers/openapi.js";

describe("the OpenAPI request check", () => {
  it("accepts a well-formed check run and flags a malformed one", () => {
    const good = {
      name: "x",
      head_sha: "abc",
      status: "completed",
      conclusion: "success",
      output: { title: "t", summary: "s" },
    };
    expect(checkRequest("POST", "/repos/o/r/check-runs", good)).toEqual([]);
    expect(checkRequest("POST", "/repos/o/r/check-runs", { head_sha: 3 }).length).toBeGreaterThan(
      0,
    );
    expect(checkRequest("POST", "/repos/o/r/check-runs", { ...good, status: "done" })).not.toEqual(
      [],
    );
  });

  it("knows which routes exist", () => {
    expect(checkRequest("GET", "/repos/o/r/pulls/3/files", undefined)).toEqual([]);
    expect(checkRequest("PATCH", "/repos/o/r/issues/comments/3", { body: "x" })).toEqual([]);
    expect(checkRequest("POST", "/repos/o/r/nope", {})).toEqual([
      "POST /repos/o/r/nope is not an operation of GitHub's REST API",
    ]);
  });
});
