import { createHash } from "node:crypto";
import { Transform, type TransformCallback } from "node:stream";

/** Why a {@link VerifiedBody} refused what passed through it. */
export class BodyRefused extends Error {
  override readonly name = "BodyRefused";
}

/**
 * Passes a request body on while counting and hashing it, and errors instead of ending when
 * it is longer or shorter than `bytes` or does not hash to `sha256`. Its last chunk is held
 * back until the whole body checked out, so a store that reads it (a file, an S3 upload of
 * `bytes`) never gets a whole body it must not keep. Past `bytes` it errors at once: a sender
 * that lies about its length cannot make the hub write more than it declared.
 */
export class VerifiedBody extends Transform {
  readonly #bytes: number;
  readonly #sha256: string;
  readonly #hash = createHash("sha256");
  #seen = 0;
  #held: Buffer | undefined;

  constructor(bytes: number, sha256: string) {
    super();
    this.#bytes = bytes;
    this.#sha256 = sha256;
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.#seen += chunk.length;
    if (this.#seen > this.#bytes) {
      done(new BodyRefused(`the body is longer than its ${this.#bytes} bytes`));
      return;
    }
    this.#hash.update(chunk);
    const previous = this.#held;
    this.#held = chunk;
    done(null, previous);
  }

  override _flush(done: TransformCallback): void {
    if (this.#seen !== this.#bytes) {
      done(new BodyRefused(`the body ended after ${this.#seen} of ${this.#bytes} bytes`));
    } else if (this.#hash.digest("hex") !== this.#sha256) {
      done(new BodyRefused("the body does not match its sha256"));
    } else done(null, this.#held);
  }
}
