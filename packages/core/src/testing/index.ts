export * from "./conformance"
export * from "./SmsOutbox"
