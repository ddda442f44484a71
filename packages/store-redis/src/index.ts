export * from "./RedisStores"
