import { clientGroupOf } from "@walletgate/core/state"
import { describe, expect, it } from "vitest"

describe("clientGroupOf", () => {
  it("counts an IPv4 address on its own", () => {
    expect(clientGroupOf("203.0.113.7")).toBe("203.0.113.7")
    expect(clientGroupOf("203.0.113.8")).toBe("203.0.113.8")
  })

  it("counts an IPv4-mapped IPv6 address as its IPv4 address, however it is written", () => {
    for (const address of [
      "::ffff:203.0.113.7",
      "::FFFF:203.0.113.7",
      "::ffff:cb00:7107",
      "0:0:0:0:0:ffff:cb00:7107"
    ]) {
      expect(clientGroupOf(address)).toBe("203.0.113.7")
    }
  })

  it("counts an IPv6 address by its /64, however it is written", () => {
    const group = "2001:db8:1:2::/64"
    for (const address of [
      "2001:db8:1:2::1",
      "2001:0DB8:0001:0002:ffff:ffff:ffff:ffff",
      "2001:db8:1:2:a:b:c:d",
      "2001:db8:1:2:0:0:192.0.2.1",
      "fe80::1%eth0".replace("fe80::1", "2001:db8:1:2::9")
    ]) {
      expect(clientGroupOf(address)).toBe(group)
    }
    expect(clientGroupOf("2001:db8:1:3::1")).toBe("2001:db8:1:3::/64")
    expect(clientGroupOf("::1")).toBe("0:0:0:0::/64")
    expect(clientGroupOf("2001:db8::")).toBe("2001:db8:0:0::/64")
  })

  it("puts no address, and one that does not parse, in the one unknown group", () => {
    for (const address of [
      undefined,
      "",
      "unknown",
      "203.0.113",
      "203.0.113.7:443",
      "[2001:db8::1]",
      "2001:db8::1::2",
      "x".repeat(100)
    ]) {
      expect(clientGroupOf(address)).toBe("unknown")
    }
  })
})
