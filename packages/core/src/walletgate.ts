import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import { SigningKeys } from "./auth/SigningKeys"
import { UserStore } from "./auth/UserStore"
import type { Gateway } from "./http/contract"
import { makeGatewayFromRoutes } from "./http/gateway"
import { OtpStore } from "./otp/OtpStore"
import { PhoneSignIn } from "./otp/PhoneSignIn"
import { OtpPolicy, type OtpPolicyOptions } from "./otp/policy"
import { otpRoutes } from "./otp/routes"
import { SmsSender } from "./otp/SmsSender"
import { SecureRandom } from "./random/SecureRandom"
import { RateLimiter } from "./ratelimit/RateLimiter"

/** Every port a gateway needs; provide them all in `makeGateway({ ports })`. */
export type GatewayPorts = OtpPolicy | OtpStore | SmsSender | RateLimiter | UserStore | SigningKeys | SecureRandom

/** Options of {@link embeddedPorts}. */
export interface EmbeddedOptions {
  /** The `iss` of issued tokens; default `walletgate`. */
  readonly issuer?: string
  /** Phone sign-in rules. */
  readonly otp?: OtpPolicyOptions
}

/**
 * The embedded defaults: in-memory state, the console SMS outbox, an ephemeral signing key and the
 * platform CSPRNG. Right for development, tests and a single process; override ports for production,
 * e.g. `Layer.mergeAll(embeddedPorts(), SmsSender.twilio(config))` (a later layer wins).
 */
export const embeddedPorts = (options: EmbeddedOptions = {}): Layer.Layer<GatewayPorts> =>
  Layer.mergeAll(
    OtpPolicy.layer(options.otp),
    OtpStore.memory,
    UserStore.memory,
    RateLimiter.memory,
    SigningKeys.ephemeral({ issuer: options.issuer ?? "walletgate" }),
    SmsSender.console(),
    SecureRandom.crypto
  )

/** Options of {@link makeGateway}. */
export interface MakeGatewayOptions<E> {
  /** The ports; default {@link embeddedPorts}. */
  readonly ports?: Layer.Layer<GatewayPorts, E>
  /** Largest request body in bytes; default 100 KiB. */
  readonly bodyLimit?: number
  /** Where log lines go; default Effect's console logger. Log lines never hold codes, tokens or keys. */
  readonly loggers?: ReadonlyArray<Logger.Logger<unknown, unknown>>
}

/** Builds a walletgate from its ports: every endpoint, ready to be mounted by an adapter. */
export const makeGateway = <E = never>(options: MakeGatewayOptions<E> = {}): Gateway => {
  const ports = options.ports ?? embeddedPorts()
  const services = PhoneSignIn.layer.pipe(Layer.provideMerge(ports))
  const layer = options.loggers === undefined ? services : Layer.merge(services, Logger.layer(options.loggers))
  return makeGatewayFromRoutes({
    routes: [...otpRoutes],
    layer,
    ...(options.bodyLimit === undefined ? {} : { bodyLimit: options.bodyLimit })
  })
}
