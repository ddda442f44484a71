/** The `aud` of the user JWTs that verifyOTP issues. */
export const USER_TOKEN_AUDIENCE = "walletgate:user"
/** The `typ` header of user JWTs; access tokens carry `at+jwt` (RFC 9068), so neither passes for the other. */
export const USER_TOKEN_TYPE = "user+jwt"
