// The app's sign-in use case, run once in process (no HTTP): walletgate's embedded ports, a test phone
// whose code is fixed, and the app's in-memory profiles. `node src/main.ts`
import { embeddedPorts } from "@walletgate/core"
import { PhoneSignIn } from "@walletgate/core/otp"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { Onboarding, Profiles } from "./Onboarding.ts"

const PHONE = "+15005550006"

const program = Effect.gen(function* () {
  const onboarding = yield* Onboarding
  const sent = yield* onboarding.start(PHONE, undefined)
  console.log(`code sent; it expires in ${sent.expiresIn} s`)
  const { profile, firstSignIn } = yield* onboarding.finish(PHONE, "123456", "Ada")
  console.log(JSON.stringify({ firstSignIn, profile }))
})

const app = Onboarding.layer.pipe(
  Layer.provide(Profiles.memory),
  Layer.provide(PhoneSignIn.layer),
  Layer.provide(embeddedPorts({ otp: { testPhones: { [PHONE]: "123456" } } }))
)

await Effect.runPromise(program.pipe(Effect.provide(app)))
