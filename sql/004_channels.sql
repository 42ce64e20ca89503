-- 004_channels: limiter state shared by every dispatcher of a channel
-- (CONTRACT sections 6.3 and 6.4): the rate limit's next free send slot,
-- the daily quota's count and the circuit breaker.  One row per channel
-- that has rate, daily_quota or circuit configured, created by the first
-- dispatcher that needs it.  Times come from the database clock.
--
-- Circuit states, as `outbox check` and an operator read them:
--   closed     circuit_open_until IS NULL
--   open       circuit_open_until > NOW(6): no instance sends
--   half-open  circuit_open_until <= NOW(6): one instance sends one probe
--              (circuit_probe_at); success closes, failure opens again
CREATE TABLE cronguard_channels (
  name                VARCHAR(64)  NOT NULL PRIMARY KEY,
  rate_tat            DATETIME(6)  NULL,   -- next free send slot (GCRA); NULL = never used
  quota_day           DATE         NULL,   -- the UTC day quota_used counts
  quota_used          INT          NOT NULL DEFAULT 0,  -- reserved or sent on quota_day
  circuit_failures    INT UNSIGNED NOT NULL DEFAULT 0,  -- consecutive transient failures
  circuit_open_until  DATETIME(6)  NULL,
  circuit_probe_at    DATETIME(6)  NULL,   -- when an instance took the half-open probe
  circuit_opened_at   DATETIME(6)  NULL,   -- when it last opened
  circuit_error       TEXT         NULL,   -- the failure that last opened it
  updated_at          DATETIME(6)  NOT NULL DEFAULT CURRENT_TIMESTAMP(6)
                      ON UPDATE CURRENT_TIMESTAMP(6)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
