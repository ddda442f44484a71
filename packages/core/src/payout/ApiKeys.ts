import { createHash, timingSafeEqual } from "node:crypto"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { SecureRandom } from "../random/SecureRandom"
import { StoreUnavailable } from "../state/errors"
import { InvalidApiKey } from "./errors"

/** An API key's mode: `live` keys move real funds; `test` keys only ever act on test networks. */
export const ApiKeyMode = Schema.Literals(["live", "test"])
/** An API key's mode. */
export type ApiKeyMode = typeof ApiKeyMode.Type

/** An API key as stored: never the key itself, only its SHA-256. */
export const ApiKeyRecord = Schema.Struct({
  /** Public identifier: the 12 characters after the prefix; shown in listings and used to revoke. */
  id: Schema.String,
  mode: ApiKeyMode,
  /** SHA-256 (hex) of the whole key. */
  hash: Schema.String,
  /** The networks (slugs) the key may act on. */
  networks: Schema.Array(Schema.String),
  /** The account addresses (lower-case) the key may act on. */
  accounts: Schema.Array(Schema.String),
  createdAt: Schema.Number,
  lastUsedAt: Schema.optionalKey(Schema.Number),
  revokedAt: Schema.optionalKey(Schema.Number)
})
/** An API key as stored. */
export type ApiKeyRecord = typeof ApiKeyRecord.Type

/** The API keys of the automation interface. */
export class ApiKeyStore extends Context.Service<
  ApiKeyStore,
  {
    readonly save: (record: ApiKeyRecord) => Effect.Effect<void, StoreUnavailable>
    readonly find: (id: string) => Effect.Effect<ApiKeyRecord | undefined, StoreUnavailable>
    readonly list: Effect.Effect<ReadonlyArray<ApiKeyRecord>, StoreUnavailable>
    /** Records a use (best effort: at most once a minute matters). */
    readonly touch: (id: string, at: number) => Effect.Effect<void, StoreUnavailable>
    readonly revoke: (id: string, at: number) => Effect.Effect<boolean, StoreUnavailable>
  }
>()("@walletgate/core/ApiKeyStore") {
  /** Keys in this process's memory, seeded with `records`. */
  static readonly memory = (records: ReadonlyArray<ApiKeyRecord> = []): Layer.Layer<ApiKeyStore> =>
    Layer.sync(ApiKeyStore, () => {
      const byId = new Map(records.map((record) => [record.id, record]))
      return ApiKeyStore.of({
        save: (record) =>
          Effect.sync(() => {
            byId.set(record.id, record)
          }),
        find: (id) => Effect.sync(() => byId.get(id)),
        list: Effect.sync(() => [...byId.values()]),
        touch: (id, at) =>
          Effect.sync(() => {
            const record = byId.get(id)
            if (record !== undefined) byId.set(id, { ...record, lastUsedAt: at })
          }),
        revoke: (id, at) =>
          Effect.sync(() => {
            const record = byId.get(id)
            if (record === undefined || record.revokedAt !== undefined) return false
            byId.set(id, { ...record, revokedAt: at })
            return true
          })
      })
    })
}

/**
 * Keys in a JSON file, for a single instance and the `walletgate keys` CLI: every change rewrites the
 * file atomically (write, then rename), so the server always reads a whole file. Keep the file private:
 * it holds hashes, not keys, but also every key's scope. A file that cannot be read or is not key records
 * (edited by hand and left broken) fails every call with `StoreUnavailable` (503) and is never written over.
 */
export const apiKeyFileStore = (path: string): Layer.Layer<ApiKeyStore> =>
  Layer.sync(ApiKeyStore, () => {
    const fs = process.getBuiltinModule("node:fs")
    const decode = Schema.decodeUnknownSync(Schema.Array(ApiKeyRecord))
    const read = (): Array<ApiKeyRecord> => {
      if (!fs.existsSync(path)) return []
      return [...decode(JSON.parse(fs.readFileSync(path, "utf8")))]
    }
    const write = (records: ReadonlyArray<ApiKeyRecord>) => {
      const temporary = `${path}.${process.pid}.tmp`
      fs.writeFileSync(temporary, `${JSON.stringify(records, null, 2)}\n`, { mode: 0o600 })
      fs.renameSync(temporary, path)
    }
    const update = (id: string, change: (record: ApiKeyRecord) => ApiKeyRecord | undefined) => {
      const records = read()
      const index = records.findIndex((record) => record.id === id)
      const current = records[index]
      const next = current === undefined ? undefined : change(current)
      if (next === undefined) return false
      records[index] = next
      write(records)
      return true
    }
    // The file's content never reaches the error: it names the operation only.
    const onFile = <A>(operation: string, run: () => A) =>
      Effect.try({ try: run, catch: () => new StoreUnavailable({ operation: `ApiKeyStore.${operation}` }) })
    return ApiKeyStore.of({
      save: (record) =>
        onFile("save", () => write([...read().filter((existing) => existing.id !== record.id), record])),
      find: (id) => onFile("find", () => read().find((record) => record.id === id)),
      list: onFile("list", read),
      touch: (id, at) => onFile("touch", () => void update(id, (record) => ({ ...record, lastUsedAt: at }))),
      revoke: (id, at) =>
        onFile("revoke", () =>
          update(id, (record) => (record.revokedAt === undefined ? { ...record, revokedAt: at } : undefined))
        )
    })
  })

const KEY_FORMAT = /^wg_(live|test)_([A-Za-z0-9_-]{12})([A-Za-z0-9_-]{32,})$/

/** SHA-256 (hex) of an API key, as stored. */
export const hashApiKey = (key: string): string => createHash("sha256").update(key).digest("hex")

/** A new key's parameters. */
export interface NewApiKey {
  readonly mode: ApiKeyMode
  readonly networks: ReadonlyArray<string>
  readonly accounts: ReadonlyArray<string>
}

/** The record of a key and the key itself, made from `random` (256 bits) at `now`; the key is shown only once. */
export const makeApiKey = Effect.fnUntraced(function* (options: NewApiKey) {
  const random = yield* SecureRandom
  const now = yield* Clock.currentTimeMillis
  // An id that began with "-" would read as an option on a command line (`walletgate keys revoke -x…`): draw again.
  let body = Buffer.from(yield* random.bytes(33)).toString("base64url")
  while (body.startsWith("-")) body = Buffer.from(yield* random.bytes(33)).toString("base64url")
  const key = `wg_${options.mode}_${body}`
  const record: ApiKeyRecord = {
    id: body.slice(0, 12),
    mode: options.mode,
    hash: hashApiKey(key),
    networks: [...options.networks],
    accounts: options.accounts.map((account) => account.toLowerCase()),
    createdAt: now
  }
  return { key, record }
})

/** Creates and stores a key; returns the key (only this once) and its record. */
export const createApiKey = Effect.fnUntraced(function* (options: NewApiKey) {
  const made = yield* makeApiKey(options)
  yield* (yield* ApiKeyStore).save(made.record)
  return made
})

/** Every key's record; never a key. */
export const listApiKeys = Effect.gen(function* () {
  return yield* (yield* ApiKeyStore).list
})

/** Revokes the key with `id`; it stops working at once. Returns whether a live key was revoked. */
export const revokeApiKey = Effect.fnUntraced(function* (id: string) {
  return yield* (yield* ApiKeyStore).revoke(id, yield* Clock.currentTimeMillis)
})

/** The record of a presented `X-API-KEY`, compared in constant time; unknown, malformed or revoked → `InvalidApiKey`. */
export const authenticateApiKey = Effect.fnUntraced(function* (presented: string | undefined) {
  const match = KEY_FORMAT.exec(presented ?? "")
  const id = match?.[2]
  if (presented === undefined || id === undefined) return yield* new InvalidApiKey()
  const store = yield* ApiKeyStore
  const record = yield* store.find(id)
  const expected = Buffer.from(record?.hash ?? "00".repeat(32), "hex")
  const actual = Buffer.from(hashApiKey(presented), "hex")
  const matches = expected.length === actual.length && timingSafeEqual(expected, actual)
  if (record === undefined || !matches || record.revokedAt !== undefined) return yield* new InvalidApiKey()
  const now = yield* Clock.currentTimeMillis
  if (record.lastUsedAt === undefined || now - record.lastUsedAt > 60_000) yield* store.touch(record.id, now)
  return record
})
