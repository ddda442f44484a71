export { type KoaContext, type KoaMiddleware, walletgate } from "./middleware"
