// Effect's floor for a Lambda function: the sign-in's body decoded with `effect/Schema` from the event's JSON string,
// through `Effect.runPromise`, and an answer. What the sign-in function cannot go below while it is written in Effect;
// bench/lambda.ts bundles it as the example's functions are bundled and measures it beside them.
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

const SignInBody = Schema.fromJsonString(Schema.Struct({ phone: Schema.String }))
const decode = Schema.decodeUnknownEffect(SignInBody)

/** The handler: 200 with the phone read from the body, 400 if the body is not `{ "phone": string }`. */
export const handler = (event: { readonly body?: string }) =>
  Effect.runPromise(
    decode(event.body).pipe(
      Effect.map(({ phone }) => ({ statusCode: 200, body: JSON.stringify({ phone }) })),
      Effect.catch(() => Effect.succeed({ statusCode: 400, body: "" }))
    )
  )
