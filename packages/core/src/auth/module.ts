import { defineModule, type GatewayModule } from "../http/module"
import type { SecureRandom } from "../random/SecureRandom"
import type { RateLimiter } from "../state/RateLimiter"
import { AppAuth, type AppAuthOptions } from "./AppAuth"
import type { ClientStore } from "./ClientStore"
import { type AuthError, authProblems } from "./errors"
import type { IdentityProviders } from "./IdentityProviders"
import { authRoutes } from "./routes"
import type { SigningKeys } from "./SigningKeys"

/** The ports app authentication needs. */
export type AppAuthPorts = ClientStore | SigningKeys | SecureRandom | IdentityProviders | RateLimiter

/**
 * Apps and their users: `POST /v1/auth` (the client-credentials grant) and the `AppAuth` service that the
 * wallet modules use to authenticate apps and verify users. Its name, `appAuth`, is what they list in `needs`.
 */
export const appAuth = (options: AppAuthOptions = {}): GatewayModule<AppAuthPorts, AppAuth> =>
  defineModule<AppAuth, AppAuthPorts, AuthError>({
    name: "appAuth",
    layer: AppAuth.layer(options),
    routes: authRoutes,
    problems: authProblems
  })
