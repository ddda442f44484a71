import {
  type Gateway,
  type GatewayRequest,
  methodTakesBody,
  readBodyWithin,
  singleValuedHeaders
} from "@walletgate/core"
import type { NextFunction, Request, RequestHandler, Response } from "express"

/**
 * Express middleware that answers every request it sees with `gateway`. Mount it at the root or
 * under a prefix (`app.use("/wallet", walletgate(gateway))`); it uses a body the host already parsed
 * (`express.json()`), otherwise reads the body itself within the gateway's limit. The client IP is
 * `req.ip`, so Express's `trust proxy` setting decides whether forwarded headers count.
 */
export const walletgate = (gateway: Gateway): RequestHandler => {
  return (req: Request, res: Response, next: NextFunction) => {
    toGatewayRequest(req, gateway.bodyLimit)
      .then((request) => gateway.handle(request))
      .then((response) => {
        res.status(response.status)
        for (const [name, value] of Object.entries(response.headers)) res.setHeader(name, value)
        res.end(response.body)
      })
      .catch(next)
  }
}

const toGatewayRequest = async (req: Request, bodyLimit: number): Promise<GatewayRequest> => {
  const queryAt = req.url.indexOf("?")
  const base = {
    method: req.method,
    path: req.path,
    query: new URLSearchParams(queryAt === -1 ? "" : req.url.slice(queryAt + 1)),
    headers: singleValuedHeaders(req.headers),
    ...(req.ip === undefined ? {} : { remoteAddress: req.ip })
  }
  // A body parser of the host already consumed the stream: take what it parsed.
  if (req.body !== undefined) return { ...base, body: req.body }
  if (!methodTakesBody(req.method) || req.readableEnded) return base
  return { ...base, rawBody: await readBodyWithin(req, bodyLimit) }
}
