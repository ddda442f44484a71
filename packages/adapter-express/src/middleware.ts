import {
  type Gateway,
  type GatewayRequest,
  type GatewayResponse,
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
    const write = (response: GatewayResponse) => {
      res.status(response.status)
      for (const [name, value] of Object.entries(response.headers)) res.setHeader(name, value)
      res.end(response.body)
    }
    const request = toGatewayRequest(req)
    // Only a body still to be read makes the request wait before the gateway sees it.
    const answered = needsBody(req)
      ? readBodyWithin(req, gateway.bodyLimit).then((rawBody) => gateway.handle({ ...request, rawBody }))
      : gateway.handle(request)
    answered.then(write).catch(next)
  }
}

/** The request as the gateway sees it, without a body it still has to read. */
const toGatewayRequest = (req: Request): GatewayRequest => {
  const queryAt = req.url.indexOf("?")
  const request = {
    method: req.method,
    path: req.path,
    query: new URLSearchParams(queryAt === -1 ? "" : req.url.slice(queryAt + 1)),
    headers: singleValuedHeaders(req.headers),
    ...(req.ip === undefined ? {} : { remoteAddress: req.ip })
  }
  // A body parser of the host already consumed the stream: take what it parsed.
  return req.body === undefined ? request : { ...request, body: req.body }
}

/** Whether the body is still in the stream: no host parser took it, and the method carries one. */
const needsBody = (req: Request): boolean => req.body === undefined && methodTakesBody(req.method) && !req.readableEnded
