// `@walletgate/redis`: the shared connection, one layer per store (and the stores of phone sign-in together), and
// `RedisStores.layer` for every store at once. Built one file per module with no work at import: a function that
// imports only `RedisConnection` and `RedisSignInStores` bundles no other store and no chain code.
export type { RedisClient } from "./internal/client"
export { RedisConnection, type RedisStoresOptions, type RedisStoresSettings } from "./RedisConnection"
export { type RedisStorePorts, RedisStores } from "./RedisStores"
export { RedisAccountLocks } from "./stores/AccountLocks"
export { RedisApiKeyStore } from "./stores/ApiKeyStore"
export { RedisAuditLog } from "./stores/AuditLog"
export { RedisAutomationAccounts } from "./stores/AutomationAccounts"
export { RedisClientStore } from "./stores/ClientStore"
export { RedisGasLedger } from "./stores/GasLedger"
export { RedisIdempotencyStore } from "./stores/IdempotencyStore"
export { RedisOrderIndex } from "./stores/OrderIndex"
export { RedisOtpStore } from "./stores/OtpStore"
export { RedisRateLimiter } from "./stores/RateLimiter"
export { RedisSignInStores } from "./stores/signIn"
export { RedisTransactionLog } from "./stores/TransactionLog"
export { RedisUserStore } from "./stores/UserStore"
