import { isIPv4, isIPv6 } from "node:net"

/** The group of every request whose client address is unknown or unreadable: they share one budget. */
export const UNKNOWN_CLIENT = "unknown"

/**
 * The group a client address is counted in by per-client limits: an IPv4 address on its own (an IPv4-mapped
 * IPv6 address, `::ffff:a.b.c.d`, is its IPv4 address); an IPv6 address by its /64, the smallest block an
 * ISP assigns one subscriber (RFC 6177), written `2001:db8:0:1::/64`; no address, or one that does not parse,
 * is {@link UNKNOWN_CLIENT}, so that requests whose sender is unknown share one budget rather than skip it.
 */
export const clientGroupOf = (address: string | undefined): string => {
  if (address === undefined) return UNKNOWN_CLIENT
  if (isIPv4(address)) return address
  // A zone index (`fe80::1%eth0`) names the server's interface, not the client.
  const zone = address.indexOf("%")
  const bare = zone === -1 ? address : address.slice(0, zone)
  if (!isIPv6(bare)) return UNKNOWN_CLIENT
  const groups = ipv6Groups(bare)
  if (groups === undefined) return UNKNOWN_CLIENT
  if (groups[0] === 0 && groups[1] === 0 && groups[2] === 0 && groups[3] === 0 && groups[4] === 0) {
    if (groups[5] === 0xffff) {
      const high = groups[6] ?? 0
      const low = groups[7] ?? 0
      return `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`
    }
  }
  return `${groups
    .slice(0, 4)
    .map((group) => group.toString(16))
    .join(":")}::/64`
}

/** The eight 16-bit groups of a valid IPv6 address (one `::` at most, an IPv4 tail allowed). */
const ipv6Groups = (address: string): ReadonlyArray<number> | undefined => {
  const halves = address.split("::")
  const parse = (half: string | undefined): Array<number> => {
    if (half === undefined || half === "") return []
    const groups: Array<number> = []
    for (const part of half.split(":")) {
      if (part.includes(".")) {
        const [a = 0, b = 0, c = 0, d = 0] = part.split(".").map(Number)
        groups.push((a << 8) | b, (c << 8) | d)
      } else {
        groups.push(Number.parseInt(part, 16))
      }
    }
    return groups
  }
  const head = parse(halves[0])
  if (halves.length === 1) return head.length === 8 ? head : undefined
  const tail = parse(halves[1])
  const missing = 8 - head.length - tail.length
  return missing < 0 ? undefined : [...head, ...new Array<number>(missing).fill(0), ...tail]
}
