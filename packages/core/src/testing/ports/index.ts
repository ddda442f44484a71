export type { PortContractCase } from "./contract"
export * from "./otpStore"
export * from "./rateLimiter"
export * from "./userStore"
