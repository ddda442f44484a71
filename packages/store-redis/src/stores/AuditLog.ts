import { AUDIT_RETENTION_DEFAULT_MS, AuditLog } from "@walletgate/core/operator"
import * as Layer from "effect/Layer"
import { redisAuditLog } from "../internal/AuditLog"
import { RedisConnection } from "../RedisConnection"

/** `AuditLog` on the shared {@link RedisConnection}: the operators' audit log, kept for `auditRetentionMs`. */
export const RedisAuditLog: Layer.Layer<AuditLog, never, RedisConnection> = Layer.effect(
  AuditLog,
  RedisConnection.useSync(({ connection, auditRetentionMs }) =>
    redisAuditLog(connection, auditRetentionMs ?? AUDIT_RETENTION_DEFAULT_MS)
  )
)
