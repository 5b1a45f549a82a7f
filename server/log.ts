// Structured JSON log lines; never bodies, passwords or tokens.
import pino, { type DestinationStream, type Logger } from 'pino';

export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: undefined,
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: ['req.headers.authorization', '*.password', '*.token'], censor: '[redacted]' },
    },
    destination ?? pino.destination({ fd: 1, sync: false }),
  );
}
