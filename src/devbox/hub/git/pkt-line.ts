/** Git's pkt-line framing (gitprotocol-common): four hex digits of length, then the payload. */

/** One pkt-line carrying `text`. */
export function pktLine(text: string): Buffer {
  const payload = Buffer.from(text, "utf8");
  return Buffer.concat([Buffer.from((payload.length + 4).toString(16).padStart(4, "0")), payload]);
}

/** The flush packet that ends a section. */
export const FLUSH = Buffer.from("0000");

/** One ref update a client asked for: `old` → `new` of `ref` (all-zero ids create or delete). */
export interface RefUpdate {
  old: string;
  new: string;
  ref: string;
}

/** A receive-pack request: the ref updates, the capabilities the client chose, and the pack. */
export interface ReceiveRequest {
  updates: RefUpdate[];
  capabilities: string[];
  pack: Buffer;
}

export const ZERO_ID = /^0+$/;

/** Parses a receive-pack request body; undefined when it is not one. */
export function parseReceiveRequest(body: Buffer): ReceiveRequest | undefined {
  const updates: RefUpdate[] = [];
  let capabilities: string[] = [];
  let offset = 0;
  for (;;) {
    if (offset + 4 > body.length) return undefined;
    const length = Number.parseInt(body.subarray(offset, offset + 4).toString("latin1"), 16);
    if (Number.isNaN(length) || (length !== 0 && length < 4)) return undefined;
    if (length === 0) {
      offset += 4;
      break;
    }
    if (offset + length > body.length) return undefined;
    let line = body.subarray(offset + 4, offset + length).toString("utf8");
    offset += length;
    const nul = line.indexOf("\0");
    if (nul >= 0) {
      capabilities = line
        .slice(nul + 1)
        .trim()
        .split(" ")
        .filter(Boolean);
      line = line.slice(0, nul);
    }
    line = line.replace(/\n$/, "");
    if (line.startsWith("shallow ")) continue;
    const match = /^([0-9a-f]{40,64}) ([0-9a-f]{40,64}) (refs\/[^\s]+)$/.exec(line);
    if (match === null) return undefined;
    updates.push({ old: match[1] ?? "", new: match[2] ?? "", ref: match[3] ?? "" });
  }
  return { updates, capabilities, pack: body.subarray(offset) };
}
