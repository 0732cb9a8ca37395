import { BlockList, isIP } from "node:net";

/**
 * Which IP addresses the egress proxy refuses to open: loopback, private, link-local (the cloud
 * metadata endpoint), CGNAT, multicast and other addresses that lead inside rather than to a
 * public host. IPv4 and IPv6 are judged by separate lists, and an IPv6 address that carries an
 * IPv4 address (`::ffff:a.b.c.d`, NAT64's `64:ff9b::a.b.c.d`) by the IPv4 address it carries:
 * a rule for the mapped range in the IPv6 list would match every IPv4 address, since Node's
 * BlockList compares IPv4 addresses as their mapped form.
 */

const INTERNAL_IPV4 = new BlockList();
for (const [network, prefix] of [
  ["0.0.0.0", 8], // "this network"
  ["10.0.0.0", 8], // private
  ["100.64.0.0", 10], // carrier-grade NAT
  ["127.0.0.0", 8], // loopback
  ["169.254.0.0", 16], // link-local: the cloud metadata endpoint
  ["172.16.0.0", 12], // private
  ["192.0.0.0", 24], // IETF protocol assignments
  ["192.168.0.0", 16], // private
  ["198.18.0.0", 15], // benchmarking, used inside networks
  ["224.0.0.0", 3], // multicast, reserved and broadcast
] as const)
  INTERNAL_IPV4.addSubnet(network, prefix, "ipv4");

const INTERNAL_IPV6 = new BlockList();
for (const [network, prefix] of [
  ["::", 96], // unspecified, loopback and the deprecated IPv4-compatible addresses
  ["100::", 64], // discard
  ["fc00::", 7], // unique local
  ["fe80::", 10], // link-local
  ["fec0::", 10], // site-local (deprecated)
  ["ff00::", 8], // multicast
] as const)
  INTERNAL_IPV6.addSubnet(network, prefix, "ipv6");

/** The eight 16-bit groups of a valid IPv6 address (a trailing dotted quad allowed, no zone). */
function ipv6Groups(address: string): number[] {
  let text = address.toLowerCase();
  const quad = /^(.*:)(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (quad !== null) {
    const [a, b, c, d] = quad.slice(2).map(Number) as [number, number, number, number];
    text = `${quad[1]}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = "", tail] = text.split("::");
  const split = (part: string) => (part === "" ? [] : part.split(":"));
  const before = split(head);
  const after = tail === undefined ? [] : split(tail);
  const zeros = Array<string>(8 - before.length - after.length).fill("0");
  return [...before, ...zeros, ...after].map((group) => parseInt(group, 16));
}

/** The IPv4 address an IPv4-mapped or NAT64 IPv6 address carries; undefined for any other. */
export function embeddedIPv4(address: string): string | undefined {
  const groups = ipv6Groups(address);
  const mapped = groups.slice(0, 6).join(":") === "0:0:0:0:0:65535";
  const nat64 = groups.slice(0, 6).join(":") === "100:65435:0:0:0:0";
  if (!mapped && !nat64) return undefined;
  const [high = 0, low = 0] = groups.slice(6);
  return [high >> 8, high & 255, low >> 8, low & 255].join(".");
}

/**
 * Whether `address` (an IPv4 or IPv6 literal, as DNS answers) leads inside: see the module's
 * comment. Anything that is not an IP address counts as internal, so it is never opened.
 */
export function isInternalAddress(address: string): boolean {
  const bare = address.replace(/%.*$/, "");
  const family = isIP(bare);
  if (family === 4) return INTERNAL_IPV4.check(bare, "ipv4");
  if (family !== 6) return true;
  const carried = embeddedIPv4(bare);
  return carried === undefined
    ? INTERNAL_IPV6.check(bare, "ipv6")
    : INTERNAL_IPV4.check(carried, "ipv4");
}
