const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/

/** The id of a request: the client's `x-request-id` when it is a sane value, else a fresh UUID. */
export const requestIdOf = (offered: string | undefined): string =>
  offered !== undefined && SANE_REQUEST_ID.test(offered) ? offered : crypto.randomUUID()
