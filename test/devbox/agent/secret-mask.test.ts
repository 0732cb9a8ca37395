/**
 * Secret masking of command output, stream by stream. The properties run
 * `CLUSTERCODE_FUZZ_RUNS` cases each (default 300; a soak sets thousands).
 */
import { mkdtempSync } from "node:fs";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { MaskedStreams, type StreamName } from "../../../src/devbox/agent/masked-streams.js";
import { executeCommand } from "../../../src/devbox/agent/run-command.js";
import { SecretMask } from "../../../src/devbox/agent/secret-mask.js";

const RUNS = { numRuns: Number(process.env.CLUSTERCODE_FUZZ_RUNS ?? 300) };

// Few letters, so secrets overlap, share prefixes and contain one another often.
const LETTERS = ["A", "B", "a", "1", "-"];
/** Letters of the other stream's text in the test that tells the streams apart. */
const OTHER_LETTERS = ["C", "D", "c", "2", "_"];

const secretsArbitrary = (letters = LETTERS) =>
  fc.uniqueArray(fc.string({ unit: fc.constantFrom(...letters), minLength: 4, maxLength: 24 }), {
    minLength: 1,
    maxLength: 3,
  });

/** Text made of whole secrets, parts of secrets and filler (with a two-byte character). */
function textArbitrary(secrets: readonly string[], filler = ["A", "a", "x", "\n", "é"]) {
  const piece = fc.oneof(
    fc.constantFrom(...secrets),
    fc
      .tuple(fc.constantFrom(...secrets), fc.nat(), fc.nat())
      .map(([secret, a, b]) => secret.slice(Math.min(a, b) % secret.length, Math.max(a, b))),
    fc.string({ unit: fc.constantFrom(...filler), maxLength: 12 }),
  );
  return fc.array(piece, { maxLength: 30 }).map((pieces) => pieces.join(""));
}

/** `bytes` cut at the given sizes (cycled), as a process's reads would cut it. */
function chunksOf(bytes: Buffer, sizes: readonly number[]): Buffer[] {
  const chunks: Buffer[] = [];
  for (let at = 0, index = 0; at < bytes.length; index++) {
    const size = sizes.length === 0 ? bytes.length : (sizes[index % sizes.length] ?? 1);
    chunks.push(bytes.subarray(at, at + size));
    at += size;
  }
  return chunks;
}

const sizesArbitrary = fc.array(fc.integer({ min: 1, max: 40 }), { maxLength: 10 });

/** Feeds both streams' chunks through one {@link MaskedStreams} in the order `picks` says. */
function merge(
  mask: SecretMask,
  streams: Record<StreamName, Buffer[]>,
  picks: readonly boolean[],
): string {
  const masked = new MaskedStreams(mask);
  const queues = { stdout: [...streams.stdout], stderr: [...streams.stderr] };
  let merged = "";
  for (let index = 0; queues.stdout.length + queues.stderr.length > 0; index++) {
    const preferred: StreamName =
      (picks[index % Math.max(picks.length, 1)] ?? true) ? "stdout" : "stderr";
    const name =
      queues[preferred].length > 0 ? preferred : preferred === "stdout" ? "stderr" : "stdout";
    merged += masked.write(name, queues[name].shift() as Buffer);
  }
  return merged + masked.end();
}

describe("secret masking across chunks and streams", () => {
  it("masks one stream chunked any way exactly as it masks the whole text", () => {
    fc.assert(
      fc.property(
        secretsArbitrary().chain((secrets) =>
          fc.tuple(fc.constant(secrets), textArbitrary(secrets), sizesArbitrary),
        ),
        ([secrets, text, sizes]) => {
          const mask = new SecretMask(secrets);
          const stream = mask.stream();
          let shown = "";
          for (const chunk of chunksOf(Buffer.from(text), sizes)) {
            shown += stream.write(chunk.toString("latin1"));
          }
          // Latin-1 keeps one character per byte, so a cut never falls inside a character here.
          const latin = Buffer.from(text).toString("latin1");
          expect(shown + stream.flush()).toBe(mask.text(latin));
        },
      ),
      RUNS,
    );
  });

  it("never shows a secret in the merged output, however the streams are chunked and interleaved", () => {
    fc.assert(
      fc.property(
        secretsArbitrary().chain((secrets) =>
          fc.tuple(
            fc.constant(secrets),
            textArbitrary(secrets),
            textArbitrary(secrets),
            sizesArbitrary,
            sizesArbitrary,
            fc.array(fc.boolean(), { maxLength: 20 }),
          ),
        ),
        ([secrets, out, err, outSizes, errSizes, picks]) => {
          const streams = {
            stdout: chunksOf(Buffer.from(out), outSizes),
            stderr: chunksOf(Buffer.from(err), errSizes),
          };
          const merged = merge(new SecretMask(secrets), streams, picks);
          for (const secret of secrets) expect(merged).not.toContain(secret);
        },
      ),
      RUNS,
    );
  });

  it("shows no part of a secret that another stream's output interrupted", () => {
    const streamArbitrary = (letters: string[], filler: string[]) =>
      secretsArbitrary(letters).chain((secrets) =>
        fc.tuple(fc.constant(secrets), textArbitrary(secrets, filler), sizesArbitrary),
      );
    fc.assert(
      fc.property(
        streamArbitrary(LETTERS, ["A", "x", "\n", "é"]),
        streamArbitrary(OTHER_LETTERS, ["C", "y", " ", "ü"]),
        fc.array(fc.boolean(), { maxLength: 20 }),
        ([outSecrets, out, outSizes], [errSecrets, err, errSizes], picks) => {
          const streams = {
            stdout: chunksOf(Buffer.from(out), outSizes),
            stderr: chunksOf(Buffer.from(err), errSizes),
          };
          const merged = merge(new SecretMask([...outSecrets, ...errSecrets]), streams, picks);
          // Each stream's own letters, a mask kept as a gap so that no secret forms across it.
          const own = (letters: string) =>
            merged.replaceAll("***", "|").replaceAll(new RegExp(`[^${letters}|]`, "g"), "");
          for (const secret of outSecrets) expect(own("AB1a\\-x\né")).not.toContain(secret);
          for (const secret of errSecrets) expect(own("CD2c_y ü")).not.toContain(secret);
        },
      ),
      RUNS,
    );
  });

  it("loses and garbles nothing: each stream's text comes through whole and in order", () => {
    fc.assert(
      fc.property(
        secretsArbitrary(),
        fc.string({ unit: fc.constantFrom("x", "y", "\n", "é"), maxLength: 200 }),
        fc.string({ unit: fc.constantFrom("0", "1", " ", "ü"), maxLength: 200 }),
        sizesArbitrary,
        sizesArbitrary,
        fc.array(fc.boolean(), { maxLength: 20 }),
        (secrets, out, err, outSizes, errSizes, picks) => {
          const streams = {
            stdout: chunksOf(Buffer.from(out), outSizes),
            stderr: chunksOf(Buffer.from(err), errSizes),
          };
          const merged = merge(new SecretMask(secrets), streams, picks);
          expect(merged.replaceAll(/[^xy\né]/g, "")).toBe(out);
          expect(merged.replaceAll(/[^01 ü]/g, "")).toBe(err);
        },
      ),
      RUNS,
    );
  });
});

describe("a command's output", () => {
  const root = mkdtempSync(join(tmpdir(), "clustercode-secret-mask-"));
  afterAll(() => rm(root, { recursive: true, force: true }));

  it("masks a secret printed in two parts with stderr output between them, in the result and the log", async () => {
    const secret = "tok-5f3a9c1e7b2d4f6a8c0e";
    const mask = new SecretMask([secret]);
    let log = "";
    const result = await executeCommand(
      {
        commandId: "c1",
        command: {
          type: "script",
          // The pauses let the reads come apart, as they would in a slower command.
          script:
            'printf "token=%s" "${T:0:10}"; sleep 0.1; echo progress >&2; sleep 0.1; printf "%s\\n" "${T:10}"',
        },
      },
      {
        cwd: root,
        env: { PATH: process.env.PATH ?? "", T: secret },
        tmpRoot: root,
        branch: "unused",
        signal: new AbortController().signal,
        mask,
        tee: (text) => (log += text),
      },
    );
    expect(result.exitCode).toBe(0);
    for (const shown of [result.output, log]) {
      expect(shown).toContain("progress\n");
      expect(shown).toContain("token=");
      expect(shown).toContain("***\n");
      expect(shown).not.toContain(secret.slice(0, 10));
      expect(shown).not.toContain(secret.slice(10));
    }
  });
});
