import { type ChainError, chainProblems } from "../chain/errors"
import type { Networks } from "../chain/networks"
import { defineModule, type GatewayModule } from "../http/module"
import type { RateLimiter } from "../state/RateLimiter"
import type { BalanceReader } from "./BalanceReader"
import { type SweeperError, sweeperProblems } from "./errors"
import type { OrderIndex } from "./OrderIndex"
import type { PriceOracle } from "./PriceOracle"
import { sweeperRoutes } from "./routes"
import { SweeperLookups } from "./SweeperLookups"
import type { SweeperSettings } from "./settings"
import type { TokenRegistry } from "./TokenRegistry"

/** The ports the dust-sweeping lookups need. */
export type SweeperPorts =
  | SweeperSettings
  | TokenRegistry
  | BalanceReader
  | PriceOracle
  | OrderIndex
  | Networks
  | RateLimiter

/** The dust-sweeping lookups (SPEC §4.5–4.7): `GET /api/:address`, `/api/all-orders`, `/api/orders`. */
export const sweeper = (): GatewayModule<SweeperPorts, SweeperLookups> =>
  defineModule<SweeperLookups, SweeperPorts, SweeperError | ChainError>({
    name: "sweeper",
    layer: SweeperLookups.layer,
    routes: sweeperRoutes,
    problems: { ...chainProblems, ...sweeperProblems }
  })
