import { StringDecoder } from "node:string_decoder";
import type { SecretMask, StreamMasker } from "./secret-mask.js";

/** Which of a process's output streams a chunk came from. */
export type StreamName = "stdout" | "stderr";

/**
 * A process's stdout and stderr as one masked text. Each stream is decoded and masked on its
 * own first, so a secret printed in parts with the other stream's output in between is still
 * whole where it is masked; the merged text is masked again, so parts of a secret printed to
 * different streams cannot meet in it either.
 */
export class MaskedStreams {
  readonly #streams: Record<StreamName, { decoder: StringDecoder; masker: StreamMasker }>;
  readonly #merged: StreamMasker;

  constructor(mask: SecretMask) {
    const stream = () => ({ decoder: new StringDecoder("utf8"), masker: mask.stream() });
    this.#streams = { stdout: stream(), stderr: stream() };
    this.#merged = mask.stream();
  }

  /** Takes a chunk of one stream; returns the merged text that can be shown now. */
  write(name: StreamName, chunk: Buffer): string {
    const stream = this.#streams[name];
    return this.#merged.write(stream.masker.write(stream.decoder.write(chunk)));
  }

  /** Once both streams ended: the rest of the merged text. */
  end(): string {
    let rest = "";
    for (const { decoder, masker } of Object.values(this.#streams)) {
      rest += this.#merged.write(masker.write(decoder.end()) + masker.flush());
    }
    return rest + this.#merged.flush();
  }
}
