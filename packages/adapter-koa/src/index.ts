export { type KoaContext, type KoaMiddleware, type KoaOptions, walletgate } from "./middleware"
