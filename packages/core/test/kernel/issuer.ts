import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { exportJWK, generateKeyPair, type JWK, SignJWT } from "jose"

/** An external identity provider on 127.0.0.1: a JWKS served over HTTP and the key that signs its tokens. */
export const startIssuer = async (options: { readonly issuer?: string; readonly audience?: string } = {}) => {
  const issuer = options.issuer ?? "https://id.example.com"
  const audience = options.audience ?? "walletgate-app"
  const { privateKey, publicKey } = await generateKeyPair("RS256")
  const jwk: JWK = { ...(await exportJWK(publicKey)), kid: "k1", alg: "RS256", use: "sig" }
  let up = true
  const server: Server = createServer((_req, res) => {
    if (!up) {
      res.socket?.destroy()
      return
    }
    res.writeHead(200, { "content-type": "application/json" })
    res.end(JSON.stringify({ keys: [jwk] }))
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const jwksUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks.json`
  const sign = (
    subject: string,
    signing: {
      expiresIn?: string | number
      key?: CryptoKey
      alg?: string
      issuer?: string
      claims?: Record<string, unknown>
    } = {}
  ) =>
    new SignJWT(signing.claims ?? {})
      .setProtectedHeader({ alg: signing.alg ?? "RS256", kid: "k1" })
      .setIssuer(signing.issuer ?? issuer)
      .setAudience(audience)
      .setSubject(subject)
      .setIssuedAt()
      .setExpirationTime(signing.expiresIn ?? "5m")
      .sign(signing.key ?? privateKey)
  return {
    jwksUrl,
    issuer,
    audience,
    sign,
    setUp: (value: boolean) => {
      up = value
    },
    stop: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

/** A running {@link startIssuer}. */
export type Issuer = Awaited<ReturnType<typeof startIssuer>>
