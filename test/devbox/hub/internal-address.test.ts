import { describe, expect, it } from "vitest";
import { InternalAddressError, resolvePublic } from "../../../src/devbox/hub/egress-proxy.js";
import { embeddedIPv4, isInternalAddress } from "../../../src/devbox/hub/internal-address.js";

const PUBLIC = [
  "8.8.8.8",
  "1.1.1.1",
  "104.16.0.35", // a registry.npmjs.org address
  "100.63.255.255", // just below CGNAT
  "172.32.0.1", // just above 172.16.0.0/12
  "2606:4700:4700::1111",
  "2001:4860:4860::8888",
  "::ffff:8.8.8.8",
  "::FFFF:0101:0101", // 1.1.1.1, in hex and upper case
  "64:ff9b::808:808", // NAT64 of 8.8.8.8
];

const INTERNAL = [
  "127.0.0.1",
  "127.255.255.254",
  "0.0.0.0",
  "10.0.0.1",
  "172.16.0.1",
  "172.31.255.255",
  "192.168.1.1",
  "169.254.169.254", // the cloud metadata endpoint
  "100.64.0.1", // CGNAT
  "100.127.255.255",
  "224.0.0.1", // multicast
  "239.255.255.250",
  "255.255.255.255",
  "::",
  "::1",
  "fe80::1",
  "fe80::1%eth0",
  "fd00::1",
  "fc00::1",
  "ff02::1",
  "::ffff:127.0.0.1",
  "::ffff:7f00:1",
  "::ffff:10.0.0.1",
  "::ffff:169.254.169.254",
  "::ffff:100.64.0.1",
  "::ffff:224.0.0.1",
  "0:0:0:0:0:ffff:c0a8:101", // 192.168.1.1, written out in full
  "64:ff9b::7f00:1", // NAT64 of 127.0.0.1
  "::127.0.0.1", // IPv4-compatible (deprecated)
  "not-an-address",
];

describe("which addresses the egress proxy opens", () => {
  it("opens public IPv4 and IPv6 addresses, and a mapped public IPv4 address", () => {
    for (const address of PUBLIC) expect(isInternalAddress(address), address).toBe(false);
  });

  it("refuses loopback, private, link-local, CGNAT and multicast in both families, mapped or not", () => {
    for (const address of INTERNAL) expect(isInternalAddress(address), address).toBe(true);
  });

  it("reads the IPv4 address a mapped or NAT64 address carries, and none from another", () => {
    expect(embeddedIPv4("::ffff:127.0.0.1")).toBe("127.0.0.1");
    expect(embeddedIPv4("::ffff:a00:1")).toBe("10.0.0.1");
    expect(embeddedIPv4("64:ff9b::808:808")).toBe("8.8.8.8");
    expect(embeddedIPv4("2606:4700:4700::1111")).toBeUndefined();
    expect(embeddedIPv4("::1")).toBeUndefined();
  });
});

describe("resolvePublic", () => {
  const answering =
    (...addresses: string[]) =>
    () =>
      Promise.resolve(addresses.map((address) => ({ address })));

  it("opens a public address literal or name (8.8.8.8, 1.1.1.1)", async () => {
    await expect(resolvePublic("8.8.8.8", 443)).resolves.toEqual({ host: "8.8.8.8", port: 443 });
    await expect(resolvePublic("1.1.1.1", 443)).resolves.toEqual({ host: "1.1.1.1", port: 443 });
    await expect(
      resolvePublic("registry.example.com", 443, answering("104.16.0.35", "2606:4700::6810:23")),
    ).resolves.toEqual({ host: "104.16.0.35", port: 443 });
  });

  it("refuses a name when any of its addresses is internal, not only the first", async () => {
    for (const answer of [
      ["1.1.1.1", "127.0.0.1"],
      ["2606:4700:4700::1111", "::ffff:169.254.169.254"],
      ["10.0.0.5"],
    ]) {
      const refused = resolvePublic("rebind.example.com", 443, answering(...answer));
      await expect(refused, answer.join(" ")).rejects.toBeInstanceOf(InternalAddressError);
      await expect(resolvePublic("rebind.example.com", 443, answering(...answer))).rejects.toThrow(
        `rebind.example.com resolves to ${answer.at(-1)}, an internal address`,
      );
    }
  });

  it("refuses an internal address literal and a name without addresses", async () => {
    await expect(resolvePublic("::ffff:127.0.0.1", 443)).rejects.toBeInstanceOf(
      InternalAddressError,
    );
    await expect(resolvePublic("empty.example.com", 443, answering())).rejects.toThrow(
      "did not resolve",
    );
  });
});
