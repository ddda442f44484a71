import {
  type Gateway,
  type GatewayRequest,
  type GatewayResponse,
  handleReadingBody,
  pathBelow,
  singleValuedHeaders
} from "@walletgate/core/adapter"
import type { NextFunction, Request, RequestHandler, Response } from "express"

/**
 * Express middleware that answers requests with `gateway`. Mount it under a prefix with Express
 * (`app.use("/wallet", walletgate(gateway))`) or give the gateway a `basePath` and mount it at the root;
 * requests outside the gateway's `basePath` go on to `next()`. It uses a body the host already parsed
 * (`express.json()`), otherwise reads the body itself within the gateway's limit. The client IP is
 * `req.ip`, so Express's `trust proxy` setting decides whether forwarded headers count.
 */
export const walletgate = (gateway: Gateway): RequestHandler => {
  return (req: Request, res: Response, next: NextFunction) => {
    // `req.path` is below Express's own mount; the gateway's base path, if any, is below that.
    if (pathBelow(gateway.basePath, req.path) === undefined) {
      next()
      return
    }
    const write = (response: GatewayResponse) => {
      res.status(response.status)
      // A field of several values (`set-cookie`) is written once per value, never joined.
      for (const [name, value] of Object.entries(response.headers)) res.setHeader(name, value)
      res.end(response.body)
    }
    const request = toGatewayRequest(req)
    // A body parser of the host already consumed the stream: take what it parsed.
    const answered =
      req.body === undefined ? handleReadingBody(gateway, request, req) : gateway.handle({ ...request, body: req.body })
    answered.then(write).catch(next)
  }
}

/** The request as the gateway sees it, before its body. */
const toGatewayRequest = (req: Request): GatewayRequest => {
  const queryAt = req.url.indexOf("?")
  return {
    method: req.method,
    path: req.path,
    query: new URLSearchParams(queryAt === -1 ? "" : req.url.slice(queryAt + 1)),
    headers: singleValuedHeaders(req.headers),
    ...(req.ip === undefined ? {} : { remoteAddress: req.ip })
  }
}
