// EXPERIMENT (issue 35): the function of every route with phone sign-in built at init and every other route's code
// (./everyRoute, a chunk of its own under esbuild's code splitting) loaded on the first request of another path.
import type { Gateway, GatewayRequest } from "@walletgate/core/adapter"
import { internalFailure } from "@walletgate/core/adapter"
import { createHandler } from "@walletgate/lambda"
import * as Effect from "effect/Effect"
import { signInSettings } from "./settings"
import { signInGateway } from "./signInGateway"

const settings = await Effect.runPromise(signInSettings())
const signIn = signInGateway(settings)
await signIn.ready()

let rest: Promise<Gateway> | undefined
const everyRoute = (): Promise<Gateway> => {
  rest ??= import("./everyRoute").then(async ({ everyRouteGateway, productionSettings }) => {
    const gateway = everyRouteGateway(await Effect.runPromise(productionSettings()))
    await gateway.ready()
    return gateway
  })
  // A load that failed is tried again by the next request.
  rest.catch(() => {
    rest = undefined
  })
  return rest
}

const isSignIn = (path: string) => path.startsWith("/functions/v1/")

const gateway: Gateway = {
  handle: (request: GatewayRequest) =>
    isSignIn(request.path)
      ? signIn.handle(request)
      : everyRoute().then(
          (loaded) => loaded.handle(request),
          () => internalFailure()
        ),
  fetch: (request, options) =>
    isSignIn(new URL(request.url).pathname)
      ? signIn.fetch(request, options)
      : everyRoute().then((loaded) => loaded.fetch(request, options)),
  basePath: signIn.basePath,
  bodyLimit: signIn.bodyLimit,
  ready: signIn.ready,
  flush: () => Promise.all([signIn.flush(), rest?.then((loaded) => loaded.flush())]).then(() => undefined),
  dispose: () => Promise.all([signIn.dispose(), rest?.then((loaded) => loaded.dispose())]).then(() => undefined)
}

/** The function's handler. */
export const handler = createHandler(gateway, { trustProxy: true })
