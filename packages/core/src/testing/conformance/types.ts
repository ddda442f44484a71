// The shapes of the conformance table: a request as a client sends it, a response as a target received it, a row.

/** A request of the conformance table, as a client sends it over the wire. */
export interface ConformanceRequest {
  readonly method: string
  /** Path and query, below the mount point. */
  readonly path: string
  readonly headers?: Readonly<Record<string, string>>
  /** The raw body: text, or bytes for non-UTF-8 cases. */
  readonly body?: string | Uint8Array<ArrayBuffer>
}

/** A response as a target received it (header names lower-case). */
export interface ConformanceResponse {
  readonly status: number
  /** One string per name; a field the target received several times joined with `, `. */
  readonly headers: Readonly<Record<string, string | undefined>>
  /** Every `Set-Cookie` field received, each whole, in order (their values hold commas, so `headers` cannot). */
  readonly setCookie: ReadonlyArray<string>
  readonly body: string
}

/** One row of the table: the request, any requests that must precede it, and the exact answer expected. */
export interface ConformanceCase {
  readonly name: string
  /** Sent first, in order, each expected to succeed (2xx). */
  readonly before?: ReadonlyArray<ConformanceRequest>
  /** The request; a function builds it from the answers to `before` (e.g. to carry an access token). */
  readonly request: ConformanceRequest | ((before: ReadonlyArray<ConformanceResponse>) => ConformanceRequest)
  readonly expect: {
    readonly status: number
    /** The media type, without parameters; `""` for an answer without a body (204, 304), whose body must be empty. */
    readonly contentType: string
    /** Headers that must be present with exactly these values (or matching these patterns). */
    readonly headers?: Readonly<Record<string, string | RegExp>>
    /** The exact `Set-Cookie` fields, in order (none when absent: every answer is checked). */
    readonly setCookie?: ReadonlyArray<string>
    /** The answer must have no body although it has a content type (a `HEAD`). */
    readonly bodyless?: boolean
    /** The exact JSON body. */
    readonly body?: unknown
    /** For bodies with unpredictable parts (tokens): returns what is wrong, empty when all is right. */
    readonly check?: (body: unknown) => ReadonlyArray<string>
  }
}
