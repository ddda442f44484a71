export { walletgate } from "./middleware"
