import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { SigningKeys } from "../auth/SigningKeys"
import { documented, routeWithBody, routeWithoutBody } from "../http/route"
import { type CodeSent, PhoneSignIn, type Session } from "./PhoneSignIn"

/**
 * Body of `POST /functions/v1/signInWithOTP` (SPEC §4.1), with `challenge`: the answer to the app's sign-in
 * challenge (a captcha token, a proof of work), when it asks for one (`SignInChallenge`).
 */
export const SignInWithOtpRequest = Schema.Struct({
  phone: Schema.String.check(Schema.isMaxLength(32, { message: "Expected at most 32 characters" })),
  challenge: Schema.optionalKey(
    Schema.String.check(Schema.isMaxLength(4096, { message: "Expected at most 4096 characters" }))
  )
})

/** Body of `POST /functions/v1/verifyOTP` (SPEC §4.2). The code is a string: a JSON number would lose leading zeros. */
export const VerifyOtpRequest = Schema.Struct({
  phone: SignInWithOtpRequest.fields.phone,
  token: Schema.String.check(Schema.isPattern(/^[0-9]{6}$/, { message: "Expected a string of 6 digits" }))
})

/** Answer of `POST /functions/v1/signInWithOTP`. */
export const SignInWithOtpResponse = Schema.Struct({
  sent: Schema.Literal(true),
  expires_in: Schema.Int,
  resend_after: Schema.Int
})

/** Answer of `POST /functions/v1/verifyOTP`. */
export const VerifyOtpResponse = Schema.Struct({
  access_token: Schema.String,
  token_type: Schema.Literal("bearer"),
  expires_in: Schema.Int,
  expires_at: Schema.Int,
  user: Schema.Struct({ id: Schema.String, phone: Schema.String })
})

/** Answer of `GET /functions/v1/.well-known/jwks.json`: the public keys that verify the tokens issued here. */
const JsonWebKeySet = Schema.Struct({
  keys: Schema.Array(
    Schema.StructWithRest(Schema.Struct({ kty: Schema.String }), [Schema.Record(Schema.String, Schema.Unknown)])
  )
})

const JWKS_HEADERS = { "cache-control": "public, max-age=300" }

/** The answer of a sign-in whose code went out. */
const sentReply = (sent: CodeSent) => {
  const reply: typeof SignInWithOtpResponse.Type = {
    sent: true,
    expires_in: sent.expiresIn,
    resend_after: sent.resendAfter
  }
  return { status: 200, body: reply }
}

/** The answer of a verified code: the session. */
const sessionReply = (session: Session) => {
  const reply: typeof VerifyOtpResponse.Type = {
    access_token: session.accessToken,
    token_type: "bearer",
    expires_in: session.expiresIn,
    expires_at: session.expiresAt,
    user: { id: session.user.id, phone: session.user.phone }
  }
  return { status: 200, body: reply }
}

/** The phone sign-in endpoints and the JWKS that verifies the tokens they issue. */
export const otpRoutes = [
  documented(
    routeWithBody(
      "POST",
      "/functions/v1/signInWithOTP",
      SignInWithOtpRequest,
      Effect.fnUntraced(function* (body, context) {
        const signIn = yield* PhoneSignIn
        return sentReply(yield* signIn.sendCode(body.phone, context.clientIp, body.challenge))
      })
    ),
    {
      summary: "Sends a sign-in code to a phone by SMS.",
      answers: [{ status: 200, description: "The code was sent.", schema: SignInWithOtpResponse }]
    }
  ),
  documented(
    routeWithBody(
      "POST",
      "/functions/v1/verifyOTP",
      VerifyOtpRequest,
      Effect.fnUntraced(function* (body) {
        const signIn = yield* PhoneSignIn
        return sessionReply(yield* signIn.verifyCode(body.phone, body.token))
      })
    ),
    {
      summary: "Exchanges a phone's code for a user session.",
      answers: [{ status: 200, description: "The session.", schema: VerifyOtpResponse }]
    }
  ),
  documented(
    routeWithoutBody(
      "GET",
      "/functions/v1/.well-known/jwks.json",
      Effect.fnUntraced(function* () {
        const keys = yield* SigningKeys
        return { status: 200, body: yield* keys.jwks, headers: JWKS_HEADERS }
      })
    ),
    {
      summary: "The public keys that verify the user tokens issued here (JWKS).",
      answers: [{ status: 200, description: "The key set.", schema: JsonWebKeySet }]
    }
  )
]
