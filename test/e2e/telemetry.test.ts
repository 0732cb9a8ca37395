import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { graphVersion } from "../../src/workflow/graph-version.js";
import { cliEnv, makeRepo, runCli } from "./local-cli.js";

/** The first workflow (`clustercode init`'s): a run node, a loop with a gate, an approval. */
const WORKFLOW = readFileSync(
  new URL("../../workflows-schema/examples/first-workflow.yml", import.meta.url),
  "utf8",
);

/** A loopback OTLP/HTTP receiver: keeps every request body by path. */
class OtlpReceiver {
  readonly bodies: { path: string; type: string; body: Buffer }[] = [];
  readonly #server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      this.bodies.push({
        path: req.url ?? "",
        type: req.headers["content-type"] ?? "",
        body: Buffer.concat(chunks),
      });
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  async listen(): Promise<string> {
    await new Promise<void>((ready) => this.#server.listen(0, "127.0.0.1", () => ready()));
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }
  close(): Promise<void> {
    return new Promise((closed) => this.#server.close(() => closed()));
  }
}

interface JsonSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes: { key: string; value: { stringValue?: string; intValue?: string } }[];
}

function spansIn(receiver: OtlpReceiver): JsonSpan[] {
  return receiver.bodies
    .filter((b) => b.path === "/v1/traces")
    .flatMap((b) => {
      const parsed = JSON.parse(b.body.toString()) as {
        resourceSpans: { scopeSpans: { spans: JsonSpan[] }[] }[];
      };
      return parsed.resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans));
    });
}

function attribute(
  span: Pick<JsonSpan, "attributes"> | undefined,
  key: string,
): string | undefined {
  const value = span?.attributes.find((a) => a.key === key)?.value;
  return value?.stringValue ?? value?.intValue;
}

describe("OpenTelemetry export of a local run", () => {
  const receiver = new OtlpReceiver();
  let endpoint: string;
  beforeAll(async () => {
    endpoint = await receiver.listen();
  });
  afterAll(() => receiver.close());

  async function runWith(
    env: Record<string, string>,
    approve = false,
    text: { brief?: string; note?: string } = {},
  ) {
    const { repo, state } = makeRepo({ "workflow.yml": WORKFLOW });
    const options = {
      cwd: repo,
      env: cliEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, ...env }),
      timeoutMs: 90_000,
    };
    const common = ["--state-dir", state, "--format", "json"];
    const brief = text.brief === undefined ? [] : ["--brief", text.brief];
    const note = text.note === undefined ? [] : ["--note", text.note];
    const result = await runCli(["run", "workflow.yml", ...brief, ...common], options);
    expect(result.stderr).not.toContain("Error");
    expect(result.code).toBe(3); // waiting at the approval
    const runId = (JSON.parse(result.stdout.trim().split("\n").at(-1) ?? "{}") as { run: string })
      .run;
    // Another process takes the run to its end: the same trace goes on.
    if (approve) {
      expect((await runCli(["approve", runId, ...note, ...common], options)).code).toBe(0);
    }
    return runId;
  }

  it("exports one trace per run over OTLP/HTTP JSON, each span with the run id and graph version", async () => {
    const runId = await runWith({ OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" }, true);
    const spans = spansIn(receiver).filter((s) => attribute(s, "clustercode.run.id") === runId);
    const version = graphVersion(WORKFLOW);
    expect(spans.length).toBeGreaterThan(0);
    for (const span of spans) expect(attribute(span, "clustercode.graph.version")).toBe(version);
    // One trace: every span of the run shares the trace id.
    expect(new Set(spans.map((s) => s.traceId)).size).toBe(1);
    const nodes = spans.filter((s) => s.name === "clustercode.node");
    expect(nodes.map((s) => attribute(s, "clustercode.node.id"))).toEqual([
      "survey",
      "notes",
      "review",
    ]);
    // The run span, exported by the process that ended the run, is every node's parent.
    const runSpan = spans.find((s) => s.name === "clustercode.run");
    expect(attribute(runSpan, "clustercode.outcome")).toBe("succeeded");
    expect(runSpan?.parentSpanId ?? "").toBe("");
    for (const node of nodes) expect(node.parentSpanId).toBe(runSpan?.spanId);
    const wait = spans.find((s) => s.name === "clustercode.approval.wait");
    expect(attribute(wait, "clustercode.outcome")).toBe("approved");
    const notes = nodes.find((s) => attribute(s, "clustercode.node.id") === "notes");
    expect(attribute(notes, "clustercode.engine")).toBe("stand-in");
    // The stand-in's CLI (bash) answered --version in the DevBox: the harness version.
    expect(attribute(notes, "clustercode.harness.version")).toMatch(/bash/i);
    // Commands and loop iterations sit under their node's span.
    const children = spans.filter(
      (s) => s.name === "clustercode.command" || s.name === "clustercode.loop.iteration",
    );
    expect(children.map((s) => s.name)).toContain("clustercode.loop.iteration");
    const nodeIds = new Set(nodes.map((s) => s.spanId));
    for (const span of children) expect(nodeIds).toContain(span.parentSpanId);
  });

  it("exports over OTLP/HTTP protobuf, the default protocol", async () => {
    const before = receiver.bodies.length;
    const runId = await runWith({});
    const traces = receiver.bodies.slice(before).filter((b) => b.path === "/v1/traces");
    expect(traces.length).toBeGreaterThan(0);
    expect(traces[0]?.type).toBe("application/x-protobuf");
    const bytes = Buffer.concat(traces.map((b) => b.body));
    expect(bytes.includes(Buffer.from(runId))).toBe(true);
    expect(bytes.includes(Buffer.from(graphVersion(WORKFLOW)))).toBe(true);
  });

  it("exports no user text: a brief's and a note's words never reach the collector", async () => {
    const before = receiver.bodies.length;
    const brief = "canary-brief-7f3a9c";
    const note = "canary-note-2b81e4";
    const runId = await runWith({ OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" }, true, {
      brief,
      note,
    });
    const bodies = receiver.bodies.slice(before);
    const text = Buffer.concat(bodies.map((b) => b.body)).toString();
    // The export happened (so the check below can fail) and names the service and its version.
    expect(text).toContain(runId);
    const resource = (
      JSON.parse(bodies.find((b) => b.path === "/v1/traces")?.body.toString() ?? "{}") as {
        resourceSpans?: { resource: { attributes: JsonSpan["attributes"] } }[];
      }
    ).resourceSpans?.[0]?.resource;
    expect(attribute(resource, "service.name")).toBe("clustercode");
    expect(attribute(resource, "service.version")).toMatch(/^\d+\.\d+/);
    expect(text).not.toContain(brief);
    expect(text).not.toContain(note);
    expect(text).not.toContain("process.command_args");
  });
});
