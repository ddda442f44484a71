export * from "./conformance"
export * from "./echoGateway"
export * from "./ports/index"
export * from "./SmsOutbox"
