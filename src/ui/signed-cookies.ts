import { createHmac, timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";

/** Options of a cookie the pages set. */
export interface CookieOptions {
  maxAgeSeconds: number;
  /** Sent over HTTPS only: when the public URL is https. */
  secure: boolean;
}

/**
 * Values in cookies signed with HMAC-SHA256 under one key: a browser can hold them but not
 * forge or alter them. They are not encrypted, so they carry no secret (a login, a nonce,
 * an expiry — never a token).
 */
export class SignedCookies {
  constructor(private readonly key: Buffer) {}

  /** `Set-Cookie` value for `name` holding `value` (HttpOnly, SameSite=Lax, Path=/). */
  set(name: string, value: object, options: CookieOptions): string {
    const body = Buffer.from(JSON.stringify(value)).toString("base64url");
    return [
      `${name}=${body}.${this.#mac(name, body)}`,
      "Path=/",
      "HttpOnly",
      "SameSite=Lax",
      `Max-Age=${options.maxAgeSeconds}`,
      ...(options.secure ? ["Secure"] : []),
    ].join("; ");
  }

  /** `Set-Cookie` value that removes `name`. */
  clear(name: string): string {
    return `${name}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0`;
  }

  /** The value of a cookie `name` of the request, when it is there and its signature holds. */
  get(req: IncomingMessage, name: string): Record<string, unknown> | undefined {
    for (const part of (req.headers.cookie ?? "").split(";")) {
      const [key, raw] = part.trim().split("=", 2);
      if (key !== name || raw === undefined) continue;
      const [body = "", mac = ""] = raw.split(".");
      const expected = Buffer.from(this.#mac(name, body));
      const given = Buffer.from(mac);
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
      try {
        const value: unknown = JSON.parse(Buffer.from(body, "base64url").toString("utf8"));
        return typeof value === "object" && value !== null
          ? (value as Record<string, unknown>)
          : undefined;
      } catch {
        return undefined;
      }
    }
    return undefined;
  }

  /** An HMAC of `text` under the key, as hex: tokens derived from a session (CSRF). */
  derive(text: string): string {
    return createHmac("sha256", this.key).update(text).digest("hex");
  }

  #mac(name: string, body: string): string {
    return createHmac("sha256", this.key).update(`${name}=${body}`).digest("base64url");
  }
}
