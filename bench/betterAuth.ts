// The peer, set up one way for every benchmark: better-auth with its phone-number plugin on its memory adapter, its
// own rate limit off (the benchmarks' sign-ins come from few addresses; walletgate's limits are raised for them too),
// a user created on the first verified code as walletgate creates one. bench/lambda/betterAuth.ts wraps it as a
// Lambda handler, bench/http/server.ts serves it in Express.
import { betterAuth } from "better-auth"
import { memoryAdapter } from "better-auth/adapters/memory"
import { phoneNumber } from "better-auth/plugins/phone-number"

/** better-auth's memory adapter's tables, which the caller may empty. */
export type PeerTables = Record<"user" | "session" | "account" | "verification", Array<unknown>>

/** better-auth's phone-number sign-in over `tables`; each code sent goes to `sent` (no SMS). */
export const makeBetterAuth = (
  secret: string,
  sent: (phoneNumber: string, code: string) => void,
  tables: PeerTables = { user: [], session: [], account: [], verification: [] }
) =>
  betterAuth({
    baseURL: "http://localhost",
    secret,
    database: memoryAdapter(tables),
    rateLimit: { enabled: false },
    plugins: [
      phoneNumber({
        sendOTP: ({ phoneNumber: phone, code }) => sent(phone, code),
        signUpOnVerification: { getTempEmail: (phone) => `${phone.slice(1)}@phone.invalid` }
      })
    ]
  })
