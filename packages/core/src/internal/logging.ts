import * as Effect from "effect/Effect"
import * as LogLevel from "effect/LogLevel"
import * as References from "effect/References"

/**
 * A log line at `level` with the annotations `annotate` makes. `Effect.annotateLogs` copies the fiber's
 * services on every call; on the request path that copy, and the annotations, are skipped when no logger
 * would write the line.
 */
export const logAnnotated = (
  level: "Info" | "Warn",
  message: string,
  annotate: () => Readonly<Record<string, unknown>>
): Effect.Effect<void> =>
  // One step that reads the fiber's loggers and level, instead of two service lookups.
  Effect.withFiber((fiber) =>
    fiber.getRef(References.CurrentLoggers).size === 0 ||
    LogLevel.isGreaterThan(fiber.getRef(References.MinimumLogLevel), level)
      ? Effect.void
      : (level === "Info" ? Effect.logInfo(message) : Effect.logWarning(message)).pipe(Effect.annotateLogs(annotate()))
  )
