/**
 * Who a request comes from, by address (docs/security.md, "Credential
 * guessing"; the access log's `client`): the peer of the connection, unless
 * that peer is a proxy named in TRUSTED_PROXIES. Then `X-Forwarded-For` is
 * read from the right, past every trusted proxy, and the first address that
 * is not one is the client: an address a client wrote itself at the left of
 * the header is never believed. With no trusted proxy, the header is ignored.
 */
import { BlockList, isIP } from "node:net";
import type { NodeRequest } from "../wire/http";

/** The client's address of a request. */
export type ClientAddressOf = (req: NodeRequest) => string;

/** Addresses and CIDR ranges (IPv4 or IPv6), as TRUSTED_PROXIES lists them; config.ts has checked them. */
export function createClientAddressOf(trustedProxies: readonly string[]): ClientAddressOf {
  const peerOf = (req: NodeRequest) => normalize(req.socket?.remoteAddress ?? "");
  if (trustedProxies.length === 0) return peerOf;
  const trusted = new BlockList();
  for (const entry of trustedProxies) {
    const [address = "", bits] = entry.split("/");
    const family = isIP(address) === 6 ? "ipv6" : "ipv4";
    if (bits === undefined) trusted.addAddress(address, family);
    else trusted.addSubnet(address, Number(bits), family);
  }
  const isTrusted = (address: string) => {
    const family = isIP(address);
    return family !== 0 && trusted.check(address, family === 6 ? "ipv6" : "ipv4");
  };
  return (req) => {
    const peer = peerOf(req);
    if (!isTrusted(peer)) return peer;
    const header = req.headers["x-forwarded-for"];
    const hops = (Array.isArray(header) ? header.join(",") : (header ?? "")).split(",");
    for (let i = hops.length - 1; i >= 0; i--) {
      const hop = normalize((hops[i] as string).trim());
      // Not an address: the chain cannot be read past it; the last proxy is who we know.
      if (isIP(hop) === 0) return peer;
      if (!isTrusted(hop)) return hop;
    }
    return peer;
  };
}

/** An IPv4 address as IPv4 even on a dual-stack socket ("::ffff:10.0.0.1" is 10.0.0.1). */
function normalize(address: string): string {
  return address.startsWith("::ffff:") && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
}
