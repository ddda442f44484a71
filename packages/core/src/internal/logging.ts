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
  Effect.flatMap(References.CurrentLoggers, (loggers) =>
    Effect.flatMap(References.MinimumLogLevel, (minimum) =>
      loggers.size === 0 || LogLevel.isGreaterThan(minimum, level)
        ? Effect.void
        : (level === "Info" ? Effect.logInfo(message) : Effect.logWarning(message)).pipe(
            Effect.annotateLogs(annotate())
          )
    )
  )
